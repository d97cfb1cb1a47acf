exists-state:
  test.nop: []
