include:
  - a

b-state:
  test.nop: []
