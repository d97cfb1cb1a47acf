# two prereqs on one target, one of which the target requires
guard-a:
  test.succeed_without_changes:
    - prereq:
      - target

guard-b:
  test.succeed_without_changes:
    - prereq:
      - target
    - require:
      - guard-a

target:
  test.succeed_with_changes:
    - require:
      - guard-b

quiet:
  test.succeed_without_changes:
    - prereq:
      - loud

loud:
  test.succeed_without_changes:
    - require:
      - quiet
