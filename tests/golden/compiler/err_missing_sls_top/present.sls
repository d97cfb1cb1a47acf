present-state:
  test.nop: []
