extra-from-pillar-flag:
  test.nop: []
