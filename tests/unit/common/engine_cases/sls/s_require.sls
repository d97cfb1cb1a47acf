nginx:
  test.succeed_with_changes:
    - name: nginx-light
  cmd.run:
    - name: echo service nginx
    - require:
      - test: nginx
