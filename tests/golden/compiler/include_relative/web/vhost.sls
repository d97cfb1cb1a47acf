web-vhost:
  test.nop: []
