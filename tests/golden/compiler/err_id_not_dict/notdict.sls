a-list:
  - test.nop
  - name: x

fine:
  test.nop: []
