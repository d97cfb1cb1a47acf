{%- from 'lib/macros.jinja' import user %}
{%- import 'lib/macros.jinja' as m %}
{%- set users = {'carol': 1003, 'alice': 1001, 'bob': 1002} %}
{%- for name, uid in users | dictsort %}
{{ user(name, uid, ['staff', 'dev'] if name == 'alice' else []) }}
{%- endfor %}

{{ m.nop('macro-nop', 1, 2, color='blue') }}

{%- macro local(n) %}
local-{{ n }}:
  test.nop:
    - caller_says: {{ caller() if caller is defined else 'none' }}
{%- endmacro %}
{% call local(1) %}hello{% endcall %}
{{ local(2) }}
