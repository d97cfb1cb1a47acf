grain_role-state:
  test.nop:
    - from: grain_role
