Deploy server package:
  file.managed:
    - name: @SANDBOX@/myapp.tar
    - contents: pretend archive

Extract by ID:
  cmd.run:
    - name: echo extracting by id
    - onchanges:
      - file: Deploy server package

Extract by name:
  cmd.run:
    - name: echo extracting by name
    - onchanges:
      - file: @SANDBOX@/myapp.tar
