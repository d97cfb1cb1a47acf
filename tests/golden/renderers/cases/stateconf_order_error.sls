#!stateconf -o yaml . jinja
.a:
  test.nop:
    - require:
      - test: .b

.b:
  test.nop
