# nginx: the package before the service (pkg/service replaced by test states)
nginx:
  test.succeed_without_changes:
    - name: nginx-light
  file.managed:
    - name: @SANDBOX@/nginx.conf
    - contents: "worker_processes 1;"
  cmd.run:
    - name: echo service nginx running
    - require:
      - test: nginx
      - file: @SANDBOX@/nginx.conf

ssl-conf:
  file.managed:
    - name: @SANDBOX@/conf.d/ssl.conf
    - makedirs: True
    - contents: ssl on

nginx-service:
  test.succeed_without_changes:
    - require:
      - file: @SANDBOX@/nginx.conf
      - file: ssl-conf
