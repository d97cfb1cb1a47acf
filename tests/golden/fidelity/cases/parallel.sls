# parallel: True states run at the same time; what requires one waits for it; their
# results carry __parallel__.
a:
  cmd.run:
    - name: echo a > @SANDBOX@/a.txt
    - parallel: True
b:
  test.succeed_with_changes:
    - parallel: True
c:
  cmd.run:
    - name: cat @SANDBOX@/a.txt
    - require:
      - cmd: a
e:
  test.fail_without_changes:
    - parallel: True
f:
  test.succeed_without_changes:
    - require:
      - test: e
