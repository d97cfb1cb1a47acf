# Salt 3007 puts no "tplroot" in the Jinja context (formulas compute it from tpldir)
tplroot-check:
  test.nop:
    - v: {{ tplroot }}
