{#- The systemd-formula's journald.conf edit: a stock file of commented-out
    defaults, options_present with strict over one section. #}
{%- set conf -%}
#  This file is part of systemd.
#
# See journald.conf(5) for details.

[Journal]
#Storage=auto
#Compress=yes
#Seal=yes
#SplitMode=uid
#SyncIntervalSec=5m
#RateLimitIntervalSec=30s
#RateLimitBurst=10000
#SystemMaxUse=
#ForwardToSyslog=yes
{%- endset %}
{%- do salt['file.write']('@SANDBOX@/journald.conf', conf) %}
journald:
  ini.options_present:
    - name: @SANDBOX@/journald.conf
    - separator: '='
    - strict: True
    - sections:
        Journal:
          Storage: persistent
          Compress: 'yes'
          Seal: 'yes'
          SplitMode: uid
          SyncIntervalSec: 5m
          RateLimitBurst: 10000
          SystemMaxUse: 500M
          ForwardToSyslog: 'yes'
