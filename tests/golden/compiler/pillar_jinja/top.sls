base:
  '*':
    - app
{%- if pillar.get('app', {}).get('extra_state') %}
    - extra
{%- endif %}
