#!stateconf -o yaml . jinja
.a:
  test.nop:
    - names:
      - x
      - y
