{%- from tpldir ~ '/map.jinja' import webapp with context %}
{%- from tpldir ~ '/macros.jinja' import setting_file with context %}

webapp-packages:
  pkg.installed:
    - pkgs: {{ webapp.packages | json }}

webapp-user:
  user.present:
    - name: {{ webapp.user }}
    - home: {{ webapp.root }}

{%- for key, value in webapp.settings | dictsort %}
{{ setting_file(key, value) }}
    - require:
      - user: webapp-user
{%- endfor %}
