first:
  test.succeed_with_changes: []
stopper:
  test.fail_without_changes:
    - failhard: True
handler:
  test.succeed_with_changes:
    - onfail:
      - test: stopper
after:
  test.nop: []
