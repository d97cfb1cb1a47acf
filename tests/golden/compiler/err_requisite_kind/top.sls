base:
  "*":
    - kind
