plain_a:
  test.succeed_without_changes

plain_b:
  test.succeed_with_changes
