first:
  test.succeed_without_changes: []

hard-fail:
  cmd.run:
    - name: "false"
    - failhard: True

never-runs:
  test.succeed_with_changes: []

onfail-ignored:
  test.succeed_with_changes:
    - onfail:
      - cmd: hard-fail
