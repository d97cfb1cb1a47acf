base:
  "*":
    - dup
