bogus:
  salt.function:
    - name: nosuch.function
    - tgt: db1
