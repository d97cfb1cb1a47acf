vim:
  test.succeed_without_changes: []
  file.managed:
    - name: @SANDBOX@/vimrc
    - contents: set nocompatible

editor-ready:
  cmd.run:
    - name: echo vim ready
    - require:
      - vim

by-name:
  test.succeed_without_changes:
    - require:
      - @SANDBOX@/vimrc
