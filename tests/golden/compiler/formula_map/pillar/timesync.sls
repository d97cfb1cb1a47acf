timesync:
  lookup:
    rootgroup: adm
  servers:
    - ntp1.example.net
{%- if grains['os_family'] == 'RedHat' %}
  service:
    enable: false
{%- endif %}
