{%- from "lib/conn.jinja" import conn %}
myerr_unknown_option:
  mysql_database.present:
    - bogus: 1
    {{- conn() }}
