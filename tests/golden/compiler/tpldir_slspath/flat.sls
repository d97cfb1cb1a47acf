{% include 'vars.jinja' %}
flat-tplpath-tail:
  test.nop:
    - tail: {{ tplpath.split('/')[-1] }}
