globbed-state:
  test.nop:
    - from: globbed
