#!jinja|nosuch
never:
  test.nop
