# What the master's reactor does for a fire_event state result tagged golden/custom: a runner
# given what the result said (data['data']['ret'], as Salt's reactor docs read it).
note_it:
  runner.test.arg:
    - args:
      - name: {{ data['data']['ret']['name'] }}
      - result: {{ data['data']['ret']['result'] }}
