network-a:
  test.nop: []
network-b:
  cmd.run:
    - name: echo net
