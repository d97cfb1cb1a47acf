base:
  "*":
    - a
