{%- for i in range(3) %}
step-{{ loop.index }}:
  test.nop:
    - idx: {{ i }}
    - first: {{ loop.first }}
    - last: {{ loop.last }}
  {%- if not loop.first %}
    - require:
      - test: step-{{ loop.index - 1 }}
  {%- endif %}
{%- endfor %}

{%- set pkgs = ['b', 'a', 'c', 'a'] %}
{%- set ns = namespace(count=0) %}
{%- for p in pkgs | unique | sort %}{% set ns.count = ns.count + 1 %}{% endfor %}
{%- set extra = [] %}
{%- do extra.append('x') %}
{%- for x in range(6) %}
  {%- if x == 1 %}{% continue %}{% endif %}
  {%- if x == 4 %}{% break %}{% endif %}
  {%- do extra.append(x) %}
{%- endfor %}

counted:
  test.nop:
    - count: {{ ns.count }}
    - uniq: {{ pkgs | unique | list | json }}
    - data: {{ {'k': [1, 2], 'z': 'v'} | json }}
    - extra: {{ extra | json }}
    - id: {{ grains['id'] }}
    - id2: {{ salt['grains.get']('id') }}
    - id3: {{ salt.grains.get('id') }}
    - echoed: {{ salt['test.echo']('hi') }}
    - opt_id: {{ opts['id'] }}
    - saltenv: {{ saltenv }}
    - sls: {{ sls }}
    - upper: {{ 'abc' | upper }}
    - joined: {{ ['x', 'y'] | join(',') }}
    - default: {{ pillar.get('nope', 'dflt') }}
    - tern: {{ 'yes' if grains.get('id') == 'golden' else 'no' }}

{% set conf = {'a': {'b': {'c': 42}}} %}
traversed:
  test.nop:
    - value: {{ conf | traverse('a:b:c') }}
    - missing: {{ conf | traverse('a:x', 'nf') }}
    - yaml_enc: {{ 'a: b' | yaml_encode }}
    - yaml_dq: {{ 'it''s' | yaml_dquote }}
