apache:
  pkg.installed:
    - name: apache2
  service.running:
    - name: apache2
    - enable: True
    - require:
      - pkg: apache

apache-conf:
  file.managed:
    - name: /etc/apache2/apache2.conf
    - source: salt://apache/files/apache2.conf
    - mode: '0644'
    - require:
      - pkg: apache
