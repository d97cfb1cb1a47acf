conf-a:
  file.managed:
    - name: @SANDBOX@/apache2/httpd.conf
    - makedirs: True
    - contents: a

conf-b:
  file.managed:
    - name: @SANDBOX@/apache2/default.conf
    - makedirs: True
    - contents: b

apache2:
  test.succeed_without_changes:
    - watch:
      - file: @SANDBOX@/apache2/*

by-id-glob:
  test.succeed_without_changes:
    - require:
      - file: conf-*
