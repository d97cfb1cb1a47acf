{%- from "lib/conn.jinja" import conn %}
pgerr_unknown_option:
  postgres_user.present:
    - connlimit: 3
    - bogus: 1
    {{- conn() }}
