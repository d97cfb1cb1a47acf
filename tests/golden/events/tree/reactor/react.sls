# What the master's reactor does for golden/react: one job on the minion, one runner.
ping_it:
  local.test.ping:
    - tgt: {{ data['id'] }}
run_it:
  runner.test.arg:
    - args:
      - x: {{ data['data']['x'] }}
