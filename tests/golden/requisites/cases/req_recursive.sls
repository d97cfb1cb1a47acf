chicken:
  test.succeed_without_changes:
    - require:
      - test: egg

egg:
  test.succeed_without_changes:
    - require:
      - test: chicken

bystander:
  test.succeed_without_changes: []
