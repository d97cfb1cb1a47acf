base:
  "*":
    - good
    - broken
