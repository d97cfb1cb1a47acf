include:
  - .lib

devapp:
  test.nop:
    - env: {{ saltenv }}
    - sls: {{ sls }}
