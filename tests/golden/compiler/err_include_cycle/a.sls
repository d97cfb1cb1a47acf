include:
  - b

a-state:
  test.nop: []
