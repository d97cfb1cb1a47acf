first:
  test.nop:
    - ok: {{ grains['id'] }}

second:
  test.nop:
    - bad: {{ no_such_variable.attribute }}
