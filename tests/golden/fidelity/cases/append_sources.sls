# file.append / prepend with sources, some missing: Salt checks the target first (test mode:
# "set to be created"; a real run creates it, empty), then loads each source in order
# ("Failed to load template file" for the first missing), rendered with Jinja.
exist_file:
  file.managed:
    - name: @SANDBOX@/exist.txt
    - contents: "line one"
missing_sources_existing_target:
  file.append:
    - name: @SANDBOX@/exist.txt
    - sources:
      - salt://files/missing1.txt
      - salt://files/missing2.txt
    - require:
      - file: exist_file
missing_source_new_target:
  file.append:
    - name: @SANDBOX@/new.txt
    - source: salt://files/missing1.txt
missing_source_no_dir:
  file.append:
    - name: @SANDBOX@/nodir/new.txt
    - source: salt://files/missing1.txt
missing_source_makedirs:
  file.prepend:
    - name: @SANDBOX@/mkd/new.txt
    - makedirs: True
    - source: salt://files/missing1.txt
one_of_two:
  file.append:
    - name: @SANDBOX@/exist.txt
    - sources:
      - salt://files/append.txt
      - salt://files/missing2.txt
    - require:
      - file: exist_file
two_sources:
  file.append:
    - name: @SANDBOX@/two.txt
    - makedirs: True
    - sources:
      - salt://files/append.txt
      - salt://files/append_tmpl.txt
