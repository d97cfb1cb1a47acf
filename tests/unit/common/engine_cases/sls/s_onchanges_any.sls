myservice:
  test.succeed_without_changes: []
/etc/myservice/myservice.conf:
  test.succeed_with_changes: []
/etc/yourservice/yourservice.conf:
  test.succeed_without_changes: []
/usr/local/sbin/myservice/post-changes-hook.sh:
  cmd.run:
    - name: echo hook
    - onchanges_any:
      - test: /etc/myservice/myservice.conf
      - test: /etc/yourservice/yourservice.conf
    - require:
      - test: myservice
