{#- options_absent and sections_absent: present, missing and empty keys,
    present and missing sections. #}
{%- set conf -%}
top = 1
empty =
[A]
x=1
y = 2
blank =
[B]
z=3
[C]
w = 4
{%- endset %}
{%- do salt['file.write']('@SANDBOX@/b.ini', conf) %}
opts_gone:
  ini.options_absent:
    - name: @SANDBOX@/b.ini
    - sections:
        A:
          - x
          - q
        Nope:
          - x
sections_gone:
  ini.sections_absent:
    - name: @SANDBOX@/b.ini
    - sections:
        - B
        - D
