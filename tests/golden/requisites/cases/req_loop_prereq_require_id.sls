# a prereq b, b require a, written as bare ids: only the run meets the loop
stop-app:
  test.succeed_without_changes:
    - prereq:
      - deploy

deploy:
  test.succeed_with_changes:
    - require:
      - stop-app

bystander:
  test.succeed_without_changes: []
