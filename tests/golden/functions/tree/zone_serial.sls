zonefile:
  file.managed:
    - name: @SANDBOX@/example.org.zone
    - source: salt://files/zone.jinja
    - template: jinja
    - context:
        zone: example.org
