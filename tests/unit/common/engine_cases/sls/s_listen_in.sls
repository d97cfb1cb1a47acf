restart-apache2:
  cmd.run:
    - name: echo apache2
configure-apache2:
  test.succeed_with_changes:
    - name: /etc/apache2/apache2.conf
    - listen_in:
      - cmd: echo apache2
quiet:
  test.succeed_without_changes:
    - listen_in:
      - cmd: restart-apache2
