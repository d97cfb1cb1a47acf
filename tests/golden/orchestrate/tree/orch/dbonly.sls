db_echo:
  salt.function:
    - name: test.echo
    - tgt: db1
    - arg:
      - db part
