vim:
  test.succeed_with_changes: []
  cmd.run:
    - name: echo vim
vimrc:
  test.nop:
    - require:
      - vim
