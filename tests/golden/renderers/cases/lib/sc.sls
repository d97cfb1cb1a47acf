#!stateconf yaml . jinja
.params:
  stateconf.set:
    - word: default
# --- end of state config ---
.say:
  test.succeed_without_changes:
    - name: say {{ params.word }}
