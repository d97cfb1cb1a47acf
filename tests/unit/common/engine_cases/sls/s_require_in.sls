httpd:
  test.succeed_with_changes:
    - require_in:
      - cmd: httpd
  cmd.run:
    - name: echo httpd
php:
  test.succeed_without_changes:
    - require_in:
      - cmd: httpd
mod_python:
  test.fail_without_changes:
    - require_in:
      - cmd: httpd
