example:
  sites:
{%- for name, port in [('www', 8080), ('api', 8081), ('admin', 8082)] %}
    - name: {{ name }}
      port: {{ port }}
{%- endfor %}
