vim:
  test.succeed_with_changes:
    - unless:
      - "false"
      - test -d /
vim2:
  test.succeed_with_changes:
    - unless:
      - "true"
      - test -d /
vim3:
  test.succeed_with_changes:
    - unless: "false"
deploy_app:
  cmd.run:
    - names:
      - echo first >> @SANDBOX@/log; touch @SANDBOX@/flag
      - echo second >> @SANDBOX@/log
    - unless: test -e @SANDBOX@/flag
