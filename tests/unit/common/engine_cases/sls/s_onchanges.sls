myservice:
  test.succeed_with_changes:
    - name: /etc/myservice/myservice.conf
  cmd.run:
    - name: echo run-build
    - onchanges:
      - test: /etc/myservice/myservice.conf
