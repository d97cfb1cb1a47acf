base:
  "*":
    - req
