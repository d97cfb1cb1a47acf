# a _in requisite whose target does not exist
in-to-ghost:
  test.succeed_without_changes:
    - require_in:
      - test: ghost-target

bystander:
  test.succeed_without_changes: []
