include:
  - self

self-state:
  test.nop: []
