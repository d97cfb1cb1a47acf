include:
  - testbase

extend:
  greeting:
    test:
      - name: hello-extended
      - require:
        - test: mine
  helper:
    test.succeed_without_changes:
      - order: last

mine:
  test.succeed_without_changes: []
