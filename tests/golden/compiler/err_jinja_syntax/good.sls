good-state:
  test.nop: []
