bad-function:
  test.no_such_function: []

bad-module:
  nosuchmodule.installed:
    - name: thing

fine:
  test.succeed_without_changes: []
