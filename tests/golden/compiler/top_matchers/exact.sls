exact-state:
  test.nop:
    - from: exact
