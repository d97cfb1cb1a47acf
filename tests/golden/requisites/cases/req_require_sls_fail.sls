include:
  - lib.failing

after-failing-sls:
  test.succeed_without_changes:
    - require:
      - sls: lib.failing
