a:
  test.nop:
    - require:
      - test: b
b:
  test.nop:
    - require:
      - test: c
c:
  test.nop:
    - require:
      - test: a
d:
  test.nop: []
e:
  test.nop:
    - require:
      - test: a
