stopper:
  test.fail_without_changes:
    - failhard: False
handler:
  test.succeed_with_changes:
    - onfail:
      - test: stopper
after:
  test.nop: []
