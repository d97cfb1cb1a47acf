graceful-down:
  test.fail_without_changes:
    - prereq:
      - test: site-code
site-code:
  test.succeed_with_changes:
    - name: /opt/site_code
nochange-down:
  cmd.run:
    - name: echo never
    - prereq:
      - test: site-nochg
site-nochg:
  test.succeed_without_changes: []
