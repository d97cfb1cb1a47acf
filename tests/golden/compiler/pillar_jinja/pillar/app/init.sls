include:
  - .users

{%- set base_port = 8000 %}
app:
  name: demo-{{ grains['id'] }}
  ports:
    http: {{ base_port + 80 }}
  admins:
{%- for a in ['ann', 'ben'] %}
    - {{ a }}
{%- endfor %}
  extra_state: true
role: {{ 'web' if grains['id'].startswith('gold') else 'other' }}
override: from-disk
