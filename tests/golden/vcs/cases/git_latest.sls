{%- import 'lib/remote.jinja' as r with context %}
{%- set sb = '@SANDBOX@' %}
{%- set url = 'file://' ~ sb ~ '/remote.git' %}
{#- checkouts that exist before the states run: one with an uncommitted change,
    one behind with a change, one on an old commit, a plain directory -#}
{%- do salt['cmd.run']('set -e; export ' ~ r.git_env() ~ '; cd ' ~ sb ~ '; if [ ! -d dirty ]; then '
  ~ 'git clone -q ' ~ url ~ ' dirty; echo local > dirty/a.txt; '
  ~ 'git clone -q ' ~ url ~ ' behind; git -C behind reset -q --hard HEAD~1; echo local > behind/a.txt; '
  ~ 'git clone -q ' ~ url ~ ' old; git -C old reset -q --hard HEAD~1; '
  ~ 'mkdir plain; echo x > plain/keep.txt; mkdir forced; echo x > forced/gone.txt; fi', python_shell=True) %}
clone_head:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/head
clone_tag:
  git.latest:
    - name: {{ url }}
    - rev: v1
    - target: {{ sb }}/tagged
clone_branch:
  git.latest:
    - name: {{ url }}
    - rev: dev
    - branch: dev
    - target: {{ sb }}/dev
clone_depth:
  git.latest:
    - name: {{ url }}
    - rev: main
    - depth: 1
    - target: {{ sb }}/shallow
clone_sha:
  git.latest:
    - name: {{ url }}
    - rev: {{ r.c1 }}
    - target: {{ sb }}/bysha
clone_plain_path:
  git.latest:
    - name: {{ sb }}/remote.git
    - target: {{ sb }}/plainpath
    - submodules: True
update_ff:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/old
update_tag_then_head:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/tagged
    - require:
      - git: clone_tag
uptodate_dirty:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/dirty
behind_dirty:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/behind
behind_dirty_forced:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/behind
    - force_reset: True
    - require:
      - git: behind_dirty
not_a_repo:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/plain
force_clone:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/forced
    - force_clone: True
unless_skips:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/never
    - unless: test -d {{ sb }}/remote.git
err_unreachable:
  git.latest:
    - name: file://{{ sb }}/nowhere.git
    - target: {{ sb }}/nowhere
err_bad_rev:
  git.latest:
    - name: {{ url }}
    - rev: nosuchbranch
    - target: {{ sb }}/badrev
err_relative_target:
  git.latest:
    - name: {{ url }}
    - target: relative/dir
err_https_user_not_https:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/auth
    - https_user: me
    - https_pass: secret
err_depth_head:
  git.latest:
    - name: {{ url }}
    - depth: 1
    - target: {{ sb }}/depthhead
err_force_reset_value:
  git.latest:
    - name: {{ url }}
    - force_reset: sometimes
    - target: {{ sb }}/fr
err_kwarg:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/kw
    - bogus: 1
err_target_is_file:
  git.latest:
    - name: {{ url }}
    - target: {{ sb }}/plain/keep.txt
