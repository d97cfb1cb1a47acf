apache2:
  test.succeed_without_changes:
    - watch:
      - test: /etc/apache2/*
conf1:
  test.succeed_with_changes:
    - name: /etc/apache2/httpd.conf
conf2:
  test.succeed_without_changes:
    - name: /etc/apache2/sites-available/default.conf
other:
  test.fail_without_changes:
    - name: /etc/other.conf
