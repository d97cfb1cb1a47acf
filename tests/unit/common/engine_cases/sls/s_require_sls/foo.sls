foo1:
  test.succeed_with_changes: []
foo2:
  test.fail_without_changes: []
