# An argument dict with several keys: `- context:` followed by a sibling key at the
# same indent is one dict {context: None, who: world}; each key is an argument.
write:
  file.managed:
    - name: @SANDBOX@/out.txt
    - contents: hello
    - context:
      who: world

after:
  test.succeed_without_changes:
    - foo: 1
      bar: 2
    - require:
      - file: write
