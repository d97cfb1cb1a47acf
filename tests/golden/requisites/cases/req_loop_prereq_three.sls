# three states in a loop through a prereq: a prereq b, b require c, c require a
a:
  test.succeed_without_changes:
    - prereq:
      - b

b:
  test.succeed_with_changes:
    - require:
      - c

c:
  test.succeed_with_changes:
    - require:
      - a

d:
  test.succeed_without_changes: []
