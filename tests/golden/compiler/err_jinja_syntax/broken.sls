{% for x in [1, 2] %}
loop-{{ x }}:
  test.nop: []
{% endfor
after:
  test.nop: []
