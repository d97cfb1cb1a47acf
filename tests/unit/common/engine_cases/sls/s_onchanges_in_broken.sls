myservice:
  test.succeed_without_changes:
    - name: /etc/myservice/myservice.conf
  cmd.run:
    - name: echo run-build
    - onchanges_in:
      - test: /etc/myservice/myservice.conf
