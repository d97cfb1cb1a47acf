included-snippet:
  test.nop:
    - from_include: {{ sls }}
