include:
  - apache

extend:
  apache:
    service:
      - watch:
        - file: mywebsite
    pkg:
      - name: apache2-bin
  apache-conf:
    file.managed:
      - mode: '0640'
      - require:
        - file: mywebsite

mywebsite:
  file.managed:
    - name: /var/www/mysite
