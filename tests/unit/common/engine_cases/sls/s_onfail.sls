primary_mount:
  test.fail_without_changes:
    - name: /mnt/share
backup_mount:
  test.succeed_with_changes:
    - name: /mnt/share
    - onfail:
      - test: primary_mount
build_site:
  cmd.run:
    - name: "true"
notify-build_failure:
  test.succeed_with_changes:
    - onfail:
      - cmd: build_site
