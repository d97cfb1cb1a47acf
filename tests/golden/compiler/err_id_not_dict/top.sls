base:
  "*":
    - notdict
