later-a:
  test.nop: []

later-first:
  test.nop:
    - order: first
