primary_mount:
  cmd.run:
    - name: "false"

backup_mount:
  cmd.run:
    - name: echo mounting backup
    - onfail:
      - cmd: primary_mount

fine:
  test.succeed_without_changes: []

not-on-success:
  test.succeed_with_changes:
    - onfail:
      - test: fine

test_site_a:
  cmd.run:
    - name: "false"

test_site_b:
  cmd.run:
    - name: "true"

notify_any:
  test.succeed_with_changes:
    - onfail:
      - cmd: test_site_a
      - cmd: test_site_b

notify_all:
  test.succeed_with_changes:
    - onfail_all:
      - cmd: test_site_a
      - cmd: test_site_b

notify_onfail_any:
  test.succeed_with_changes:
    - onfail_any:
      - cmd: test_site_b
      - cmd: test_site_a
