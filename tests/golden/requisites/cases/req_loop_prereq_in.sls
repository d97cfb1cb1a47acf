# prereq_in forms: x prereq_in y (y prereq x) with x require y;
# p prereq_in q with q require p and a third state r
x:
  test.succeed_with_changes:
    - prereq_in:
      - test: y
    - require:
      - test: y

y:
  test.succeed_without_changes: []

p:
  test.succeed_with_changes:
    - prereq_in:
      - q

q:
  test.succeed_without_changes:
    - require:
      - r

r:
  test.succeed_with_changes:
    - require:
      - p
