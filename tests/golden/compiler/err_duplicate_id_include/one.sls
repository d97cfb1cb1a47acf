shared-id:
  test.nop:
    - from: one
