/etc/foo.conf:
  test.configurable_test_state:
    - changes: True
    - result: True
    - comment: foo comment
    - require:
      - test: base
/etc/bar.conf:
  test.configurable_test_state:
    - use:
      - test: /etc/foo.conf
/etc/baz.conf:
  test.configurable_test_state:
    - comment: own comment
    - use:
      - test: /etc/foo.conf
base:
  test.nop:
    - use_in:
      - test: /etc/qux.conf
    - comment: unused
/etc/qux.conf:
  test.configurable_test_state:
    - result: False
