base:
  "*":
    - present
    - absent
    - also.absent
