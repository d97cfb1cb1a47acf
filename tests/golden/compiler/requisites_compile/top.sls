base:
  '*':
    - reqs
