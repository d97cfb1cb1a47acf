late_one:
  test.nop
