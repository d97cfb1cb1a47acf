first:
  test.succeed_with_changes:
    - require_in:
      - test: third
second:
  test.fail_without_changes:
    - names:
      - s1
      - s2:
        - order: 1
third:
  test.nop:
    - use:
      - test: second
    - foo: bar
fourth:
  test.nop:
    - require:
      - test: s1
    - watch_in:
      - test: first
