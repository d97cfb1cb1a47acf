dirs:
  file.directory:
    - names:
      - @SANDBOX@/d1
      - @SANDBOX@/d2:
        - mode: '0700'
      - @SANDBOX@/d3
    - makedirs: True

after-dirs:
  cmd.run:
    - name: echo dirs done
    - require:
      - file: dirs

after-d2:
  test.succeed_without_changes:
    - require:
      - file: @SANDBOX@/d2
