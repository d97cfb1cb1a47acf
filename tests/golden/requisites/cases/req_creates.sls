existing:
  file.managed:
    - name: @SANDBOX@/exists
    - contents: here

contrived creates example:
  file.touch:
    - name: @SANDBOX@/exists
    - creates: @SANDBOX@/exists

creates list:
  cmd.run:
    - name: echo some missing
    - creates:
      - @SANDBOX@/exists
      - @SANDBOX@/missing

all present:
  cmd.run:
    - name: echo not shown
    - creates:
      - @SANDBOX@/exists
