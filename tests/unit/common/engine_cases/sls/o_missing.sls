a:
  test.nop:
    - require:
      - test: nothere
    - watch:
      - cmd: alsonot
b:
  test.nop:
    - require:
      - test: a
c:
  test.nop:
    - onchanges:
      - nosuch
