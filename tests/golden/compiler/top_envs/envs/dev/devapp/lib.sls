devapp-lib:
  test.nop: []
