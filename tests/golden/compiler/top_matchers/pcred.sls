pcred-state:
  test.nop:
    - from: pcred
