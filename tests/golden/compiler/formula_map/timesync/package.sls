{%- set tplroot = tpldir.split('/')[0] %}
{%- from tplroot ~ "/map.jinja" import timesync with context %}

timesync-package-install-pkg-installed:
  pkg.installed:
    - name: {{ timesync.pkg }}
