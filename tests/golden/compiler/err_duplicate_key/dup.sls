same-id:
  test.nop:
    - which: first

other:
  test.nop: []

same-id:
  test.nop:
    - which: second
