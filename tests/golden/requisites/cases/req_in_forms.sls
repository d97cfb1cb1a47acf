httpd:
  test.succeed_without_changes:
    - require_in:
      - cmd: httpd
  cmd.run:
    - name: echo httpd

{% for cfile in ['a.conf', 'b.conf'] %}
@SANDBOX@/conf.d/{{ cfile }}:
  file.managed:
    - makedirs: True
    - contents: {{ cfile }}
    - require:
      - test: httpd
    - watch_in:
      - test: reloader
    - onchanges_in:
      - cmd: on-conf-change
{% endfor %}

reloader:
  test.succeed_without_changes: []

on-conf-change:
  cmd.run:
    - name: echo conf changed
