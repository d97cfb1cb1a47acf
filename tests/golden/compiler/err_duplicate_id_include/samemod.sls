# same ID as one.sls but a different state module: merged or refused?
include:
  - one

shared-id:
  cmd.run:
    - name: echo hi
