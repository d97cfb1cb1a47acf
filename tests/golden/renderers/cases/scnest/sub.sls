#!stateconf -G yaml . jinja
# no goal state (-G); sls_dir of a nested file; a ..-relative reference
.deep:
  test.nop:
    - dir: {{ sls_dir }}

.other:
  test.nop:
    - require:
      - test: .deep
