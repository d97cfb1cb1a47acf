web-deep-leaf:
  test.nop: []
