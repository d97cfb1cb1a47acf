common-state:
  test.nop:
    - from: common
