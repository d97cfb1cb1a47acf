restart-apache2:
  test.succeed_without_changes:
    - name: apache2
    - listen:
      - test: /etc/apache2/apache2.conf
configure-apache2:
  test.succeed_with_changes:
    - name: /etc/apache2/apache2.conf
after:
  test.nop: []
