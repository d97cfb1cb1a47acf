include:
  - s_require_sls.foo
bar:
  test.nop:
    - require:
      - sls: s_require_sls.foo
early:
  test.nop:
    - order: 1
