#!stateconf -os yaml . jinja
include:
  - pydsl_include_back_ns
.yaml_side:
  test.nop
