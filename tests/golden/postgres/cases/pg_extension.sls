{%- from "lib/conn.jinja" import conn %}
pge_db:
  postgres_database.present:
    {{- conn() }}

pge_schema:
  postgres_schema.present:
    - dbname: pge_db
    - require:
      - postgres_database: pge_db
    {{- conn() }}

hstore:
  postgres_extension.present:
    - maintenance_db: pge_db
    - schema: pge_schema
    - require:
      - postgres_schema: pge_schema
    {{- conn() }}

pgcrypto:
  postgres_extension.present:
    - maintenance_db: pge_db
    - require:
      - postgres_database: pge_db
    {{- conn() }}

pge_drop_create:
  postgres_extension.present:
    - name: citext
    - maintenance_db: pge_db
    - require:
      - postgres_database: pge_db
    {{- conn() }}

citext:
  postgres_extension.absent:
    - maintenance_db: pge_db
    - require:
      - postgres_extension: pge_drop_create
    {{- conn() }}

pge_never_installed:
  postgres_extension.absent:
    - name: ltree
    - maintenance_db: pge_db
    - require:
      - postgres_database: pge_db
    {{- conn() }}

pge_no_such_extension:
  postgres_extension.present:
    - maintenance_db: pge_db
    - require:
      - postgres_database: pge_db
    {{- conn() }}
