base:
  "*":
    - ext
