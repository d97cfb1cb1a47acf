# a longer chain: file change -> watch -> onchanges -> listen, with order
conf:
  file.managed:
    - name: @SANDBOX@/app/app.conf
    - makedirs: True
    - source: salt://files/app.conf
    - order: 1

app-service:
  test.succeed_without_changes:
    - watch:
      - file: conf

rebuild:
  cmd.run:
    - name: echo rebuild
    - onchanges:
      - file: conf
    - require:
      - test: app-service

announce:
  cmd.run:
    - name: echo announce
    - listen:
      - cmd: rebuild

cleanup:
  file.absent:
    - name: @SANDBOX@/app/stale
    - order: last

{% for n in [1, 2] %}
worker-{{ n }}:
  test.succeed_with_changes:
    - require:
      - cmd: rebuild
    - require_in:
      - test: all-workers
{% endfor %}

all-workers:
  test.succeed_without_changes: []

touch-after:
  file.touch:
    - name: @SANDBOX@/app/done
    - require:
      - test: all-workers
