ntpd:
  test.succeed_without_changes:
    - watch:
      - file: @SANDBOX@/ntp.conf
  file.managed:
    - name: @SANDBOX@/ntp.conf
    - contents: server pool.example.org

quiet-config:
  test.succeed_without_changes: []

watch-no-changes:
  test.succeed_without_changes:
    - watch:
      - test: quiet-config

broken-config:
  test.fail_with_changes: []

watch-failed:
  test.succeed_without_changes:
    - watch:
      - test: broken-config

rerun-cmd:
  cmd.run:
    - name: echo watched
    - watch:
      - file: ntpd
