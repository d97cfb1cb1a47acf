include:
  - pydsl_include_back
back_yaml:
  test.nop
