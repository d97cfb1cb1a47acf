real:
  test.nop: []
