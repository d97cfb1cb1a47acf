include:
  - network

httpd:
  pkg.installed:
    - require_in:
      - service: httpd
  service.running:
    - require:
      - sls: network

php:
  pkg.installed:
    - require_in:
      - service: httpd
    - watch_in:
      - cmd: reload-hook

reload-hook:
  cmd.run:
    - name: echo reload
    - onchanges_in:
      - test: notify
    - listen_in:
      - service: httpd

notify:
  test.nop:
    - onfail_in:
      - test: alarm

alarm:
  test.nop:
    - prereq_in:
      - test: notify

/etc/foo.conf:
  file.managed:
    - source: salt://foo.conf
    - template: jinja
    - mkdirs: True
    - user: apache
    - group: apache
    - mode: '0755'
    - require:
      - pkg: httpd

/etc/bar.conf:
  file.managed:
    - source: salt://bar.conf
    - use:
      - file: /etc/foo.conf

/etc/baz.conf:
  file.managed:
    - user: root
    - use_in:
      - file: /etc/qux.conf

/etc/qux.conf:
  file.managed:
    - mode: '0600'

no-module:
  test.nop:
    - require:
      - httpd
      - /etc/foo.conf

globbed:
  test.nop:
    - watch:
      - file: /etc/*
    - require_any:
      - test: notify
      - test: alarm
    - onfail_all:
      - cmd: network-b
