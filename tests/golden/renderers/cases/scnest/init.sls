#!stateconf -s yaml . jinja
# a relative include, references to the included file's ids, and a state of its own
include:
  - .sub

.own:
  test.succeed_without_changes:
    - require:
      - stateconf: scnest.sub::goal
      - test: scnest.sub::deep
