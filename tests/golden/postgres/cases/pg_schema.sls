{%- from "lib/conn.jinja" import conn %}
pgs_db:
  postgres_database.present:
    {{- conn() }}

pgs_owner:
  postgres_user.present:
    {{- conn() }}

pgs_app:
  postgres_schema.present:
    - dbname: pgs_db
    - owner: pgs_owner
    - require:
      - postgres_database: pgs_db
      - postgres_user: pgs_owner
    {{- conn() }}

pgs_public_exists:
  postgres_schema.present:
    - name: public
    - dbname: pgs_db
    - require:
      - postgres_database: pgs_db
    {{- conn() }}

pgs_doomed_create:
  postgres_schema.present:
    - name: pgs_doomed
    - dbname: pgs_db
    - require:
      - postgres_database: pgs_db
    {{- conn() }}

pgs_doomed:
  postgres_schema.absent:
    - dbname: pgs_db
    - require:
      - postgres_schema: pgs_doomed_create
    {{- conn() }}

pgs_never_there:
  postgres_schema.absent:
    - dbname: pgs_db
    - require:
      - postgres_database: pgs_db
    {{- conn() }}
