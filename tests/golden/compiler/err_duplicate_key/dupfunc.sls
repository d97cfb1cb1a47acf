# the same state module twice under one ID
one-id:
  test.nop: []
  test.succeed_without_changes: []
