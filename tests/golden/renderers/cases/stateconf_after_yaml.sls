#!jinja|yaml|stateconf -p
{% set word = 'from-jinja' %}
.a:
  test.succeed_without_changes:
    - name: {{ word }}
.b:
  test.nop:
    - require:
      - test: .a
