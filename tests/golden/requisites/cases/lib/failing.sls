failing-one:
  cmd.run:
    - name: "false"
