compound_paren-state:
  test.nop:
    - from: compound_paren
