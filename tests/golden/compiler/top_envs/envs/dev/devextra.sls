devextra:
  test.nop: []
