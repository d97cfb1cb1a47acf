#!jinja|stateconf -o yaml
.a:
  test.nop
