core:
  test.nop:
    - env: {{ saltenv }}
