ntpd:
  cmd.run:
    - name: echo ntpd restarted
    - watch:
      - test: /etc/ntp.conf
  test.succeed_with_changes:
    - name: /etc/ntp.conf
nginx:
  cmd.wait:
    - name: echo nginx reload
    - watch:
      - test: nginx
  test.succeed_with_changes:
    - name: /etc/nginx/conf.d/tls-settings.conf
quiet:
  cmd.wait:
    - name: echo never
    - watch:
      - test: quietconf
quietconf:
  test.succeed_without_changes: []
