#!stateconf -s yaml . jinja
# include of a nested stateconf file; references to its ids; start and goal of both
include:
  - scnest2.sub

.own:
  test.succeed_without_changes:
    - require:
      - stateconf: scnest2.sub::goal
      - test: scnest2.sub::deep
