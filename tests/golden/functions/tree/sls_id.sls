include:
  - sls_id_other

first:
  file.managed:
    - name: @SANDBOX@/first.txt
    - contents: first

second:
  file.managed:
    - name: @SANDBOX@/second.txt
    - contents: second
    - require:
      - file: first

with_name:
  file.managed:
    - names:
      - @SANDBOX@/n1.txt
      - @SANDBOX@/n2.txt
    - contents: named
