needs-ghost:
  test.succeed_without_changes:
    - require:
      - test: ghost

watches-ghost-file:
  test.succeed_without_changes:
    - watch:
      - file: /no/such/file

needs-missing-sls:
  test.succeed_without_changes:
    - require:
      - sls: not_included

onchanges-ghost:
  test.succeed_without_changes:
    - onchanges:
      - ghost-without-module

independent:
  test.succeed_without_changes: []
