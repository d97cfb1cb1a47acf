# a prereq b, b require a, both with the state module as key: Salt's compiler
# sees the pair as recursive
stop-app:
  test.succeed_without_changes:
    - prereq:
      - test: deploy

deploy:
  test.succeed_with_changes:
    - require:
      - test: stop-app

bystander:
  test.succeed_without_changes: []
