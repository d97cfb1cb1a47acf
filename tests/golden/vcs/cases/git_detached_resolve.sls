{#- git.detached where briny differs from Salt 3007 on purpose (see states/git.py):
    an annotated tag is checked out at its commit (Salt takes the tag object's
    SHA1 for a commit ID, so every run checks it out again and reports a change),
    a short SHA1 matches the commit it abbreviates (Salt compares the strings, with
    the same result), and a SHA1 that names nothing fails the state (Salt: a
    traceback). -#}
{%- import 'lib/remote.jinja' as r with context %}
{%- set sb = '@SANDBOX@' %}
{%- set url = 'file://' ~ sb ~ '/remote.git' %}
{%- do salt['cmd.run']('set -e; cd ' ~ sb ~ '; if [ ! -d atc1 ]; then '
  ~ 'git clone -q ' ~ url ~ ' atc1; git -C atc1 checkout -q --detach ' ~ r.c1 ~ '; fi', python_shell=True) %}
annotated_tag:
  git.detached:
    - name: {{ url }}
    - rev: v1
    - target: {{ sb }}/d_annotated
short_sha_there:
  git.detached:
    - name: {{ url }}
    - rev: {{ r.c1[:7] }}
    - target: {{ sb }}/atc1
err_bad_sha:
  git.detached:
    - name: {{ url }}
    - rev: 0123456789abcdef0123456789abcdef01234567
    - target: {{ sb }}/badsha
