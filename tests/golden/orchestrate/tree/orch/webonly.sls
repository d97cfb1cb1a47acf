web1_setup:
  salt.state:
    - tgt: web1
    - sls: app.web
