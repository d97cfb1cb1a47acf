ping:
  salt.function:
    - name: test.ping
    - tgt: m1
