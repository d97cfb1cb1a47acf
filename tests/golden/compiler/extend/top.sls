base:
  '*':
    - mywebsite
