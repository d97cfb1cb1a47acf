# a use b, b require a: use copies arguments at compile time, the loop is only a require
first:
  test.succeed_with_changes:
    - use:
      - test: second

second:
  test.succeed_without_changes:
    - require:
      - test: first

third:
  test.succeed_with_changes:
    - use:
      - fourth
    - require:
      - fourth

fourth:
  test.succeed_without_changes:
    - use:
      - third
