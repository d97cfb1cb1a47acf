pkg:
  test.succeed_with_changes: []
conf:
  test.succeed_with_changes:
    - require:
      - test: pkg
svc:
  cmd.run:
    - name: echo svc
    - watch:
      - test: conf
    - require:
      - test: pkg
hook:
  test.succeed_without_changes:
    - onchanges:
      - cmd: svc
alert:
  test.succeed_with_changes:
    - onfail:
      - cmd: svc
      - test: conf
post:
  test.nop:
    - require:
      - test: hook
      - test: alert
