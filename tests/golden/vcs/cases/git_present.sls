{%- import 'lib/remote.jinja' as r with context %}
{%- set sb = '@SANDBOX@' %}
{%- set url = 'file://' ~ sb ~ '/remote.git' %}
{%- do salt['cmd.run']('set -e; cd ' ~ sb ~ '; if [ ! -d busy ]; then mkdir busy; echo x > busy/f; git clone -q ' ~ url ~ ' onmain; git clone -q ' ~ url ~ ' ondev; fi', python_shell=True) %}
bare_repo:
  git.present:
    - name: {{ sb }}/new.git
work_repo:
  git.present:
    - name: {{ sb }}/newwork
    - bare: False
existing_bare:
  git.present:
    - name: {{ sb }}/remote.git
busy_dir:
  git.present:
    - name: {{ sb }}/busy
cloned_new:
  git.cloned:
    - name: {{ url }}
    - target: {{ sb }}/cl
cloned_branch:
  git.cloned:
    - name: {{ url }}
    - target: {{ sb }}/cldev
    - branch: dev
cloned_existing:
  git.cloned:
    - name: {{ url }}
    - target: {{ sb }}/onmain
    - branch: main
cloned_switch:
  git.cloned:
    - name: {{ url }}
    - target: {{ sb }}/ondev
    - branch: dev
cloned_unreachable:
  git.cloned:
    - name: file://{{ sb }}/nowhere.git
    - target: {{ sb }}/nowhere
