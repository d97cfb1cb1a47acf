{%- set tplroot = tpldir.split('/')[0] %}
{%- set sls_config_file = tplroot ~ '.config' %}
{%- from tplroot ~ "/map.jinja" import timesync with context %}

include:
  - {{ sls_config_file }}

timesync-service-running-service-running:
  service.running:
    - name: {{ timesync.service.name }}
    - enable: {{ timesync.service.enable }}
    - watch:
      - file: timesync-config-file-file-managed
    - require:
      - sls: {{ sls_config_file }}
