apply:
  salt.state:
    - tgt: m1
    - sls: plain
