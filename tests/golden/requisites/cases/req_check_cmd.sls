repo-file:
  file.managed:
    - name: @SANDBOX@/fedora.repo
    - contents: enabled=0

check-passes:
  cmd.run:
    - name: sed -i 's/enabled=0/enabled=1/' @SANDBOX@/fedora.repo
    - check_cmd:
      - "! grep 'enabled=0' @SANDBOX@/fedora.repo"

check-fails:
  cmd.run:
    - name: echo pretend
    - check_cmd:
      - "false"
