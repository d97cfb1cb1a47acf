listed-state:
  test.nop:
    - from: listed
