# file_mode: keep (file.recurse) and mode: keep (file.managed): each file gets its
# source's mode (the recorder writes the tree with the default 0644).
rec:
  file.recurse:
    - name: @SANDBOX@/rec
    - source: salt://files/tree
    - file_mode: keep

existing:
  file.managed:
    - name: @SANDBOX@/exist.txt
    - contents: top file
    - mode: "0600"
    - replace: False

man_keep:
  file.managed:
    - name: @SANDBOX@/exist.txt
    - source: salt://files/tree/a.txt
    - mode: keep
    - require:
      - file: existing

keep_with_contents:
  file.managed:
    - name: @SANDBOX@/never.txt
    - contents: x
    - mode: keep
