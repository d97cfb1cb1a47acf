last-thing:
  test.nop:
    - order: last

plain-a:
  test.nop: []

first-thing:
  test.nop:
    - order: first

ten:
  test.nop:
    - order: 10

minus-one:
  test.nop:
    - order: -1

one:
  test.nop:
    - order: 1

plain-b:
  test.nop: []

two-states:
  test.succeed_without_changes:
    - order: 5
  cmd.run:
    - name: "true"
