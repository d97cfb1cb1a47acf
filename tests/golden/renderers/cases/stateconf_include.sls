#!stateconf yaml . jinja
include:
  - lib.sc

extend:
  lib.sc::params:
    stateconf.set:
      - word: overridden

here:
  test.nop:
    - require:
      - stateconf: lib.sc::goal
