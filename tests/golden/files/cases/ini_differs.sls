{#- Where briny deliberately differs from Salt 3007 (see states/ini_manage.py):
    sections_present works (Salt: TypeError traceback), options_absent reports
    a removed key with an empty value (Salt removes it silently), a scalar
    removes the top-level key live too, and a missing file is not created. #}
{%- do salt['file.write']('@SANDBOX@/c.ini', "top = 1\nother = 2\n[A]\nx = 1\nblank =") %}
present:
  ini.sections_present:
    - name: @SANDBOX@/c.ini
    - sections:
        - A
        - New
blank:
  ini.options_absent:
    - name: @SANDBOX@/c.ini
    - sections:
        A:
          - blank
scalar:
  ini.options_absent:
    - name: @SANDBOX@/c.ini
    - sections:
        top: anything
missing:
  ini.options_absent:
    - name: @SANDBOX@/none.ini
    - sections:
        A:
          - x
