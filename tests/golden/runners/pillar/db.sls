role: db
ports:
  - 5432
