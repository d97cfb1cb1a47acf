foo1:
  test.succeed_with_changes: []
foo2:
  test.succeed_without_changes: []
