include:
  - lib.network

httpd:
  test.succeed_without_changes:
    - require:
      - sls: lib.network
  cmd.run:
    - name: echo httpd started
    - require:
      - test: httpd
      - sls: lib.network
