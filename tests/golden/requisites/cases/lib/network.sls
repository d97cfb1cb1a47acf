network-up:
  test.succeed_without_changes: []
network-conf:
  file.managed:
    - name: @SANDBOX@/network.conf
    - contents: net
