# a state run by orchestration (salt.state), with no event of its own
quiet:
  test.succeed_without_changes
