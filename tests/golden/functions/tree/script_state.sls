plain:
  cmd.script:
    - source: salt://scripts/show.sh
    - args: one two
    - cwd: @SANDBOX@

templated:
  cmd.script:
    - source: salt://scripts/templated.sh
    - template: jinja

failing:
  cmd.script:
    - name: salt://scripts/fail.sh code2

missing:
  cmd.script:
    - source: salt://scripts/missing.sh

with_env:
  cmd.script:
    - source: salt://scripts/show.sh
    - env:
      - GREETING: hello
