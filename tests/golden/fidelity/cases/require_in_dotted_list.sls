# A requisite_in whose key holds a dot: Salt refuses it (and, in the list form, cannot extend the target).
a:
  test.succeed_without_changes:
    - require_in:
      - test.succeed_without_changes: b
b:
  test.succeed_without_changes: []
