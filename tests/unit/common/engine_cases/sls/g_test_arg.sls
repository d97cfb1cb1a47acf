forced_test:
  test.succeed_with_changes:
    - test: True
plain:
  test.succeed_with_changes: []
dep:
  test.succeed_without_changes:
    - onchanges:
      - test: forced_test
