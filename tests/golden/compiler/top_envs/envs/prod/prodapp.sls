prodapp:
  test.nop: []
