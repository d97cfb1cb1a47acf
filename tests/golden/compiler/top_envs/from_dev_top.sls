from-dev-top-base:
  test.nop: []
