enable-httpd:
  test.succeed_with_changes:
    - name: httpd
start-httpd:
  test.succeed_without_changes:
    - name: httpd
    - watch:
      - test: httpd-config
httpd-config:
  test.succeed_with_changes:
    - name: /etc/httpd/conf/httpd.conf
