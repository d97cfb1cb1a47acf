comment-repo:
  cmd.run:
    - name: echo enabled=0 > @SANDBOX@/repo
    - check_cmd:
      - "! grep 'enabled=0' @SANDBOX@/repo"
good:
  test.succeed_with_changes:
    - check_cmd:
      - "true"
bad:
  test.succeed_with_changes:
    - check_cmd: "false"
