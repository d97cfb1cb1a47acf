explicit_glob-state:
  test.nop:
    - from: explicit_glob
