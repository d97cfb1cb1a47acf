#!stateconf yaml . jinja
# sls_dir of a nested file; a ..-relative reference to the including file's id
.deep:
  test.nop:
    - dir: {{ sls_dir }}

.other:
  test.nop:
    - require:
      - test: .deep
    - require_in:
      - test: ..::own
