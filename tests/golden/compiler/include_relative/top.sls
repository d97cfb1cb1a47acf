base:
  '*':
    - app
    - web.site
