pkgs:
  test.succeed_with_changes:
    - names:
      - p1
      - p2
svc:
  test.succeed_without_changes:
    - watch:
      - test: p2
svc2:
  test.nop:
    - require:
      - test: pkgs
