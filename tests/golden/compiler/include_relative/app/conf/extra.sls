app-conf-extra:
  test.nop: []
