{%- from "lib/conn.jinja" import conn, psql %}
{#- Salt 3007 never finds a grant made with grant_option unless it names every privilege of the
    type, and counts MAINTAIN (PostgreSQL 17) in a table's ALL: its second run grants again or fails.
    briny checks what was asked (tests/integration/test_db_golden.py KNOWN_GAPS). #}
pgo_db:
  postgres_database.present:
    {{- conn() }}

pgo_group:
  postgres_group.present:
    {{- conn() }}

pgo_objects:
  cmd.run:
    - name: >-
        {{ psql('pgo_db', 'CREATE TABLE IF NOT EXISTS pgo_t (id int)') }}
    - env:
      - PGPASSWORD: '@PGPASS@'
    - unless: >-
        {{ psql('pgo_db', 'SELECT 1/count(*) FROM pg_class WHERE relname = \'pgo_t\'') }}
    - require:
      - postgres_database: pgo_db

pgo_all_with_option:
  postgres_privileges.present:
    - name: pgo_group
    - object_name: pgo_t
    - object_type: table
    - privileges: [ALL]
    - grant_option: true
    - maintenance_db: pgo_db
    - require:
      - cmd: pgo_objects
      - postgres_group: pgo_group
    {{- conn() }}

pgo_some_with_option:
  postgres_privileges.present:
    - name: pgo_group
    - object_name: pgo_db
    - object_type: database
    - privileges: [CONNECT]
    - grant_option: true
    - require:
      - postgres_group: pgo_group
    {{- conn() }}
