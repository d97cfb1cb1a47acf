restart-apache2:
  cmd.run:
    - name: echo restarting apache2
    - listen:
      - file: @SANDBOX@/apache2.conf

configure-apache2:
  file.managed:
    - name: @SANDBOX@/apache2.conf
    - contents: ServerName golden

middle:
  test.succeed_without_changes: []

restart-nginx:
  cmd.run:
    - name: echo restarting nginx

configure-nginx:
  file.managed:
    - name: @SANDBOX@/nginx.conf
    - contents: events {}
    - listen_in:
      - cmd: restart-nginx

quiet:
  test.succeed_without_changes:
    - listen_in:
      - cmd: restart-nginx
