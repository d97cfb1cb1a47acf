@SANDBOX@/foo.conf:
  file.managed:
    - contents: shared settings
    - mode: '0600'
    - makedirs: True
    - require:
      - test: helper

@SANDBOX@/sub/bar.conf:
  file.managed:
    - use:
      - file: @SANDBOX@/foo.conf

helper:
  test.succeed_without_changes: []

@SANDBOX@/baz.conf:
  file.managed:
    - contents: baz
    - mode: '0640'
    - use_in:
      - file: @SANDBOX@/qux.conf

@SANDBOX@/qux.conf:
  file.managed:
    - contents: qux
