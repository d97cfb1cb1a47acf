ok-state:
  test.nop:
    - order: 2

bad-string:
  test.nop:
    - order: banana

bad-list:
  test.nop:
    - order: [1, 2]
