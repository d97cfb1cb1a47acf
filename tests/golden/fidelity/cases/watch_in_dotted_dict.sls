# The dict form of watch_in with a dotted key: refused, the target found by the part before the dot.
b:
  test.succeed_without_changes: []
c:
  test.succeed_without_changes:
    - watch_in:
        test.nop: b
