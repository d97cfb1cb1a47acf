include:
  - one
  - two

main:
  test.nop: []
