grain_glob-state:
  test.nop:
    - from: grain_glob
