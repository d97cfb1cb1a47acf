{%- import 'lib/remote.jinja' as r with context %}
{%- set sb = '@SANDBOX@' %}
{%- set url = 'file://' ~ sb ~ '/remote.git' %}
{#- checkouts that exist before the states run: one on main, one on main with an
    uncommitted change, one at c1 (detached), one whose origin is another URL, a
    plain directory, a directory to force a clone into -#}
{%- do salt['cmd.run']('set -e; export ' ~ r.git_env() ~ '; cd ' ~ sb ~ '; if [ ! -d onmain ]; then '
  ~ 'git clone -q ' ~ url ~ ' onmain; git clone -q ' ~ url ~ ' dirty; echo local > dirty/a.txt; '
  ~ 'git clone -q ' ~ url ~ ' atc1; git -C atc1 checkout -q --detach ' ~ r.c1 ~ '; '
  ~ 'git clone -q ' ~ url ~ ' moved; git -C moved remote set-url origin ' ~ sb ~ '/remote.git; '
  ~ 'git clone -q ' ~ url ~ ' nofetch; '
  ~ 'mkdir plain; echo x > plain/keep.txt; mkdir forced; echo x > forced/gone.txt; fi', python_shell=True) %}
branch_fresh:
  git.detached:
    - name: {{ url }}
    - rev: dev
    - target: {{ sb }}/d_branch
light_tag_fresh:
  git.detached:
    - name: {{ url }}
    - rev: v1light
    - target: {{ sb }}/d_light
sha_fresh:
  git.detached:
    - name: {{ url }}
    - rev: {{ r.c1 }}
    - target: {{ sb }}/d_sha
other_remote_name:
  git.detached:
    - name: {{ url }}
    - rev: main
    - remote: upstream
    - target: {{ sb }}/d_upstream
    - submodules: True
existing_to_sha:
  git.detached:
    - name: {{ url }}
    - rev: {{ r.c1 }}
    - target: {{ sb }}/onmain
already_there:
  git.detached:
    - name: {{ url }}
    - rev: {{ r.c1 }}
    - target: {{ sb }}/atc1
dirty_hard_reset:
  git.detached:
    - name: {{ url }}
    - rev: dev
    - target: {{ sb }}/dirty
    - hard_reset: True
remote_moved:
  git.detached:
    - name: {{ url }}
    - rev: v1light
    - target: {{ sb }}/moved
no_fetch:
  git.detached:
    - name: {{ url }}
    - rev: dev
    - target: {{ sb }}/nofetch
    - fetch_remote: False
force_clone:
  git.detached:
    - name: {{ url }}
    - rev: main
    - target: {{ sb }}/forced
    - force_clone: True
err_not_a_repo:
  git.detached:
    - name: {{ url }}
    - rev: main
    - target: {{ sb }}/plain
err_bad_rev:
  git.detached:
    - name: {{ url }}
    - rev: nosuchbranch
    - target: {{ sb }}/badrev
err_unreachable:
  git.detached:
    - name: file://{{ sb }}/nowhere.git
    - rev: main
    - target: {{ sb }}/nowhere
err_relative_target:
  git.detached:
    - name: {{ url }}
    - rev: main
    - target: relative/dir
err_target_is_file:
  git.detached:
    - name: {{ url }}
    - rev: main
    - target: {{ sb }}/plain/keep.txt
err_https_user_not_https:
  git.detached:
    - name: {{ url }}
    - rev: main
    - target: {{ sb }}/auth
    - https_user: me
    - https_pass: secret
err_identity_type:
  git.detached:
    - name: {{ url }}
    - rev: main
    - target: {{ sb }}/ident
    - identity: 5
err_kwarg:
  git.detached:
    - name: {{ url }}
    - rev: main
    - target: {{ sb }}/kw
    - bogus: 1
