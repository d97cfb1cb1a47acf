contrived:
  cmd.run:
    - name: touch @SANDBOX@/file
    - creates: @SANDBOX@/file
exists:
  test.succeed_with_changes:
    - creates: /etc/passwd
creates list:
  test.succeed_with_changes:
    - creates:
      - /etc/passwd
      - /nonexistent/file2
all there:
  test.succeed_with_changes:
    - creates:
      - /etc/passwd
      - /etc
