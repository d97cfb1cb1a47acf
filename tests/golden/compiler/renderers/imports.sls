{%- import_yaml 'data/conf.yaml' as conf %}
{%- import_json 'data/conf.json' as cj %}
{%- import_text 'data/motd.txt' as motd %}
{%- load_yaml as ly %}
items: [1, 2]
name: loaded
{%- endload %}
{%- load_json as lj %}
{"j": [true, null]}
{%- endload %}
{%- set fy = "k: v\nn: 1" | load_yaml %}
{%- set fj = '{"x": [1]}' | load_json %}

imported:
  test.nop:
    - port: {{ conf.server.port }}
    - hosts: {{ conf.server.hosts | json }}
    - feature: {{ cj.feature | json }}
    - motd: {{ motd | json }}
    - ly: {{ ly | json }}
    - lj: {{ lj | json }}
    - fy: {{ fy | json }}
    - fj: {{ fj | json }}
    - tojson: {{ {'b': 1, 'a': [2]} | tojson }}

{% include 'data/snippet.sls' %}
