python-pkgs:
  pkg.installed:
    - names:
      - python3-django
      - python3-crypto
      - python3-yaml

ius:
  pkgrepo.managed:
    - humanname: IUS Community Packages for Enterprise Linux 6 - $basearch
    - gpgcheck: 1
    - baseurl: http://mirror.example.com/ius/stable/CentOS/6/$basearch
    - gpgkey: http://mirror.example.com/ius/IUS-COMMUNITY-GPG-KEY
    - names:
      - ius
      - ius-devel:
        - baseurl: http://mirror.example.com/ius/development/CentOS/6/$basearch
      - ius-testing:
        - baseurl: http://mirror.example.com/ius/testing/CentOS/6/$basearch
        - gpgcheck: 0

site dirs:
  file.directory:
    - user: root
    - name: /ignored/when/names/given
    - names:
      - /srv/a
      - /srv/b:
        - mode: '0700'
        - require:
          - pkg: python3-yaml
    - require:
      - pkg: python-pkgs

services:
  service:
    - running
    - enable: True
    - names:
      - nginx
      - php-fpm
