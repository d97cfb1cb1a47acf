{%- from "lib/conn.jinja" import conn %}
pgerr_unknown_object_type:
  postgres_privileges.present:
    - name: postgres
    - object_name: postgres
    - object_type: cluster
    - privileges: [ALL]
    {{- conn() }}
