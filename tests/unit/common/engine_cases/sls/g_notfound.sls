bad:
  test.no_such_function: []
dep:
  test.nop:
    - require:
      - test: bad
ok:
  test.nop: []
