from-dev-top:
  test.nop: []
