# web9 has no key: expect_minions makes its absence a failure
needs_web9:
  salt.state:
    - tgt: 'db1,web9'
    - tgt_type: list
    - sls: app.db
    - expect_minions: True

after_web9:
  salt.function:
    - name: test.echo
    - tgt: db1
    - arg:
      - never
    - require:
      - salt: needs_web9
