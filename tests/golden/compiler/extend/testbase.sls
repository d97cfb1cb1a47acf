greeting:
  test.succeed_with_changes:
    - name: hello
    - require:
      - test: helper

helper:
  test.succeed_without_changes: []

other:
  test.nop: []
