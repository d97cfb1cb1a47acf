base:
  '*': []
