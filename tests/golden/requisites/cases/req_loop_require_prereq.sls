# the other way round: a require b, b prereq a (a is the prereq target)
app:
  test.succeed_with_changes:
    - require:
      - hook

hook:
  test.succeed_without_changes:
    - prereq:
      - app

after:
  test.succeed_without_changes:
    - require:
      - app
