base:
  "*":
    - unknown
