A:
  cmd.run:
    - name: echo A
    - require_any:
      - cmd: B
      - cmd: C

B:
  cmd.run:
    - name: echo B

C:
  cmd.run:
    - name: "false"

D:
  cmd.run:
    - name: echo D
    - require_any:
      - cmd: C
      - test: E

E:
  test.fail_without_changes: []

myservice-conf:
  file.managed:
    - name: @SANDBOX@/myservice.conf
    - contents: mine

yourservice-conf:
  test.succeed_without_changes: []

post-changes-hook:
  cmd.run:
    - name: echo hook
    - onchanges_any:
      - file: myservice-conf
      - test: yourservice-conf
    - require:
      - cmd: B

watch-any:
  test.succeed_without_changes:
    - watch_any:
      - cmd: C
      - file: myservice-conf
