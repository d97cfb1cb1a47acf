# the three ways of writing one state, and several states under one ID
vim:
  pkg.installed: []

git:
  pkg:
    - installed

htop:
  pkg.latest:
    - refresh: True
    - version: "3.2"

ntp:
  pkg.installed: []
  service.running:
    - enable: True
    - require:
      - pkg: ntp

tmux:
  pkg:
    - installed
    - name: tmux-full
  service:
    - running
    - name: tmux-server

/etc/motd:
  file.managed:
    - mode: '0644'
    - contents: |
        hello
        world

empty args:
  test.nop:
    - name: a name with spaces
    - nested:
        key: [1, 2, {three: 3}]
    - flag: false
    - nothing: null
