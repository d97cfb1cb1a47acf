# relative includes from an init.sls one level down
include:
  - .leaf
  - ..vhost

web-deep:
  test.nop: []
