broken-state:
  test.nop:
    - name: fine
   - bad_indent: true
