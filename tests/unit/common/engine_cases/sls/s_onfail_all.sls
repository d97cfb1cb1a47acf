test_site_a:
  cmd.run:
    - name: "false"
test_site_b:
  cmd.run:
    - name: exit 2
notify_site_down:
  test.succeed_with_changes:
    - onfail_all:
      - cmd: test_site_a
      - cmd: test_site_b
notify_one_down:
  test.succeed_with_changes:
    - onfail_all:
      - cmd: test_site_a
      - test: notify_site_down
