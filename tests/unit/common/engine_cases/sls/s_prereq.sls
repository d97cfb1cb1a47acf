graceful-down:
  cmd.run:
    - name: echo graceful
    - prereq:
      - test: site-code
site-code:
  test.succeed_with_changes:
    - name: /opt/site_code
