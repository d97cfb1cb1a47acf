graceful-down:
  cmd.run:
    - name: echo service apache graceful
    - prereq:
      - file: site-code

site-code:
  file.managed:
    - name: @SANDBOX@/site/index.txt
    - makedirs: True
    - source: salt://files/site.txt

steady:
  test.succeed_without_changes: []

not-needed:
  cmd.run:
    - name: echo never
    - prereq:
      - test: steady

failing-prereq:
  cmd.run:
    - name: "false"
    - prereq:
      - file: guarded-file

guarded-file:
  file.managed:
    - name: @SANDBOX@/guarded.txt
    - contents: should not be written
