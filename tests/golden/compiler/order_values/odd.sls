# order values that are not plain integers
float:
  test.nop:
    - order: 2.5

numeric-string:
  test.nop:
    - order: "5"

big:
  test.nop:
    - order: 100000

zero:
  test.nop:
    - order: 0
