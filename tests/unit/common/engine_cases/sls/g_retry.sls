wait_for_file:
  test.fail_without_changes:
    - retry:
        attempts: 3
        interval: 0
flip:
  cmd.run:
    - name: test -e @SANDBOX@/once || (touch @SANDBOX@/once; exit 1)
    - retry:
        attempts: 4
        interval: 0
        until: True
ok:
  test.succeed_with_changes:
    - retry: True
