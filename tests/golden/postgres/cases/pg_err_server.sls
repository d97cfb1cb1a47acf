{%- from "lib/conn.jinja" import conn %}
pgerr_wrong_password:
  postgres_user.present:
    {{- conn(password='not-the-password') }}

pgerr_refused:
  postgres_database.present:
    {{- conn(port='@PGDEADPORT@') }}

pgerr_refused_absent:
  postgres_user.absent:
    {{- conn(port='@PGDEADPORT@') }}

pgerr_unknown_privilege:
  postgres_privileges.present:
    - name: postgres
    - object_name: postgres
    - object_type: database
    - privileges: [SELEKT]
    {{- conn() }}

pgerr_bad_algorithm:
  postgres_user.present:
    - password: x
    - encrypted: sha1
    {{- conn() }}
