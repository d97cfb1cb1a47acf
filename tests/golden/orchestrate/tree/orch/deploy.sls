# db first, then the web tier (web2 fails), then steps that require them
db_setup:
  salt.state:
    - tgt: db1
    - sls: app.db

web_setup:
  salt.state:
    - tgt: 'web*'
    - sls: app.web
    - require:
      - salt: db_setup

db_check:
  salt.function:
    - name: test.echo
    - tgt: db1
    - arg:
      - db is up
    - require:
      - salt: db_setup

announce:
  salt.function:
    - name: test.echo
    - tgt: 'web*'
    - arg:
      - deployed
    - require:
      - salt: web_setup
