never-state:
  test.nop:
    - from: never
