base:
  'web*':
    - web
  'db*':
    - db
