include:
  - .vhost
  - .deep
  - ..common

web-site:
  test.nop: []
