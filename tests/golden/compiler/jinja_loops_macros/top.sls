base:
  '*':
    - users
    - steps
