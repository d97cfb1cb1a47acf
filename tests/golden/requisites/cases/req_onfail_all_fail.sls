site_a:
  cmd.run:
    - name: "false"

site_b:
  test.fail_without_changes: []

both-down:
  test.succeed_with_changes:
    - onfail_all:
      - cmd: site_a
      - test: site_b

onfail_in-form:
  test.fail_without_changes:
    - onfail_in:
      - test: rescue

rescue:
  test.succeed_without_changes: []
