compound_and-state:
  test.nop:
    - from: compound_and
