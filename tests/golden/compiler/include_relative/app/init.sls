include:
  - .sub
  - .conf.main
  - common

app-init:
  test.nop:
    - from: {{ sls }}
