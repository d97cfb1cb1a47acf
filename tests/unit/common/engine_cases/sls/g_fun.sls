exists:
  test.succeed_with_changes:
    - onlyif:
      - fun: file.file_exists
        path: /etc/passwd
missing:
  test.succeed_with_changes:
    - onlyif:
      - fun: file.file_exists
        path: /nonexistent/file
unless_exists:
  test.succeed_with_changes:
    - unless:
      - fun: file.file_exists
        args:
          - /etc/passwd
unless_missing:
  test.succeed_with_changes:
    - unless:
      - fun: file.file_exists
        args:
          - /nonexistent/file
getret:
  test.succeed_with_changes:
    - onlyif:
      - fun: test.arg
        args:
          - 0
        get_return: args
getret2:
  test.succeed_with_changes:
    - onlyif:
      - fun: test.echo
        text: ""
