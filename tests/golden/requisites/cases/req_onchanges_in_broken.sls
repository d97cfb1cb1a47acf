# the "broken logic" example: onchanges_in makes the file wait on the command
myservice:
  file.managed:
    - name: @SANDBOX@/myservice.conf
    - contents: built
  cmd.run:
    - name: echo run-build
    - onchanges_in:
      - file: @SANDBOX@/myservice.conf
