target:
  test.nop: []

misspelled:
  test.nop:
    - requires:
      - test: target

not-a-list:
  test.nop:
    - require: target

bad-entry:
  test.nop:
    - require:
      - [test, target]
