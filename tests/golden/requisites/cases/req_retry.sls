wait_for_file:
  file.exists:
    - name: @SANDBOX@/never-there
    - retry:
        attempts: 3
        interval: 0

retry-defaults-until:
  test.succeed_without_changes:
    - retry:
        attempts: 2
        until: True
        interval: 0

retry-until-false:
  test.succeed_without_changes:
    - retry:
        attempts: 2
        until: False
        interval: 0
