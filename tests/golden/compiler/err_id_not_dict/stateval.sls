# the state declaration is a dict instead of a list
dict-args:
  test.nop:
    name: x
