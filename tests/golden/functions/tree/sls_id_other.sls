other:
  file.managed:
    - name: @SANDBOX@/other.txt
    - contents: other
