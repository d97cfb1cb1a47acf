include:
  - exists
  - doesnotexist
  - .relative_missing

main-state:
  test.nop: []
