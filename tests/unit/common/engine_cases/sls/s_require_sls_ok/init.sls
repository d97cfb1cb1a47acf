include:
  - s_require_sls_ok.foo
bar:
  test.nop:
    - watch:
      - sls: s_require_sls_ok.foo
