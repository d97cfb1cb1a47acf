# service states on a host with systemctl installed but systemd not PID 1:
# Salt's offline mode for running/dead, the rest as usual (the service does
# not exist, so nothing on the host changes).
conf:
  file.managed:
    - name: @SANDBOX@/svc.conf
    - contents: v1
running_watching:
  service.running:
    - name: brinygolden-nosuch
    - enable: True
    - watch:
      - file: conf
dead:
  service.dead:
    - name: brinygolden-nosuch
typo:
  service.running:
    - name: brinygolden-nosuch
    - enabled: True
enabled:
  service.enabled:
    - name: brinygolden-nosuch
disabled:
  service.disabled:
    - name: brinygolden-nosuch
