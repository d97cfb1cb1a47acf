base:
  '*':
    - ordered
    - later
