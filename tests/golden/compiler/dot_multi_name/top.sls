base:
  '*':
    - motd
    - web
