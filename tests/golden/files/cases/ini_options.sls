{#- options_present without strict: top-level options, a new section, an
    existing one (new, changed, unchanged keys; a commented-out key becomes
    the option), other separators and no_spaces. #}
{%- set conf -%}
; top comment
name = old
keep=1
#added = commented default

[main]
# a comment
enabled = false
count=3
#level=debug

[other]
x = 1
{%- endset %}
{%- do salt['file.write']('@SANDBOX@/a.ini', conf) %}
{%- do salt['file.write']('@SANDBOX@/colon.ini', "top: 1\n[A]\nx:1\ny : 2") %}
{%- do salt['file.write']('@SANDBOX@/space.ini', "top 1\n[A]\nx    1") %}
{%- do salt['file.write']('@SANDBOX@/nospace.ini', "top = 1\n[A]\nx = 1") %}
options:
  ini.options_present:
    - name: @SANDBOX@/a.ini
    - sections:
        name: new
        added: 5
        keep: 1
        main:
          enabled: true
          count: 3
          level: info
          fresh: value with = sign
        brand_new:
          k1: v1
          k2: 2
colon:
  ini.options_present:
    - name: @SANDBOX@/colon.ini
    - separator: ':'
    - sections:
        A:
          z: 3
space:
  ini.options_present:
    - name: @SANDBOX@/space.ini
    - separator: ' '
    - sections:
        A:
          z: 3
          x: 2
nospace:
  ini.options_present:
    - name: @SANDBOX@/nospace.ini
    - no_spaces: True
    - sections:
        t2: 2
        A:
          z: 3
        B:
          w: 4
created:
  ini.options_present:
    - name: @SANDBOX@/created.ini
    - sections:
        top: here
        S:
          a: b
unchanged:
  ini.options_present:
    - name: @SANDBOX@/a.ini
    - sections:
        other:
          x: 1
