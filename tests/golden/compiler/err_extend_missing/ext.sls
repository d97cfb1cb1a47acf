include:
  - base_states

extend:
  ghost:
    test.nop:
      - extra: 1
  real:
    test.nop:
      - extra: 2

local:
  test.nop: []
