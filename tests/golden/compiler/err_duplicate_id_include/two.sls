shared-id:
  test.nop:
    - from: two
