app-sub:
  test.nop: []
