db_config:
  test.succeed_with_changes:
    - name: postgresql.conf
