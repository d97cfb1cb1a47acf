{#- strict: options and sections the state does not name go (one of each,
    Salt reports them in set order); comments, blank lines inside a section,
    a repeated key and a continuation line. #}
{%- set conf -%}
# head comment
topkey=1

[Journal]
#Storage=auto
#Compress=yes
Seal=no
dup=1
dup=2
  cont line

; kept comment

[Empty]
; semi
foo : bar
{%- endset %}
{%- do salt['file.write']('@SANDBOX@/a.ini', conf) %}
strict:
  ini.options_present:
    - name: @SANDBOX@/a.ini
    - strict: True
    - sections:
        Journal:
          Storage: persistent
          Seal: 'no'
          A: [1, 2]
          B: True
          C: null
