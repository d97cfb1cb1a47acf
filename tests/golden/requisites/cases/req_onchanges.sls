myservice:
  file.managed:
    - name: @SANDBOX@/myservice.conf
    - source: salt://files/app.conf
  cmd.run:
    - name: echo run-build
    - onchanges:
      - file: @SANDBOX@/myservice.conf

unchanged:
  test.succeed_without_changes: []

not-triggered:
  cmd.run:
    - name: echo should not run
    - onchanges:
      - test: unchanged

failed-with-changes:
  test.fail_with_changes: []

not-triggered-by-failure:
  test.succeed_without_changes:
    - onchanges:
      - test: failed-with-changes
