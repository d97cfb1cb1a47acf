# relative includes from a non-init file
include:
  - ..sub
  - .extra

app-conf-main:
  test.nop:
    - require:
      - sls: app.sub
