{%- set tplroot = tpldir.split('/')[0] %}
{%- set sls_package_install = tplroot ~ '.package' %}
{%- from tplroot ~ "/map.jinja" import timesync with context %}

include:
  - {{ sls_package_install }}

timesync-config-file-file-managed:
  file.managed:
    - name: {{ timesync.config }}
    - source: salt://{{ tplroot }}/files/default/chrony.conf.jinja
    - mode: '0644'
    - user: root
    - group: {{ timesync.rootgroup }}
    - makedirs: True
    - template: jinja
    - require:
      - sls: {{ sls_package_install }}
    - context:
        timesync: {{ timesync | json }}
