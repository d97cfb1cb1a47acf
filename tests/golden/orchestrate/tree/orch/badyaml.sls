broken:
  salt.function:
    - name: test.ping
    - tgt: [db1
