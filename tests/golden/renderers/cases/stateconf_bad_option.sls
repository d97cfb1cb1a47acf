#!stateconf -x yaml . jinja
.a:
  test.nop
