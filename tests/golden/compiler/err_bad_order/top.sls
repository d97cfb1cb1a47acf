base:
  "*":
    - badorder
