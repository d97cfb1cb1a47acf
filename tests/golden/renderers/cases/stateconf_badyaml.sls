#!stateconf yaml . jinja
.a:
  test.nop:
    - foo: [1, 2
