# The orchestration's own Jinja asks the master's runners and wheel (salt.saltutil.runner /
# .wheel, as Salt's orch.mine test does with mine.get): the answers shape the steps.
{%- set up = salt.saltutil.runner('manage.up') %}
{%- set down = salt['saltutil.runner']('manage.down') %}
{%- set keys = salt.saltutil.wheel('key.list_all') %}
{%- set mined = salt.saltutil.runner('mine.get', tgt='*', fun='nothing.published') %}
{%- for minion in up %}
ping_{{ minion }}:
  salt.function:
    - name: test.echo
    - tgt: {{ minion }}
    - arg:
      - "{{ minion }} is up, {{ down | length }} down"
{%- endfor %}
report:
  salt.function:
    - name: test.echo
    - tgt: db1
    - arg:
      - "accepted: {{ keys['return']['minions'] | join(',') }}; a list: {{ up is sequence and up is not string }}; mined: {{ mined | tojson }}"
