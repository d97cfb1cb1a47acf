{%- from "lib/conn.jinja" import conn, psql %}
pgp_db:
  postgres_database.present:
    {{- conn() }}

pgp_role:
  postgres_user.present:
    {{- conn() }}

pgp_group:
  postgres_group.present:
    {{- conn() }}

pgp_objects:
  cmd.run:
    - name: >-
        {{ psql('pgp_db', 'CREATE TABLE IF NOT EXISTS pgp_t (id serial); CREATE SCHEMA IF NOT EXISTS pgp_s; CREATE TABLE IF NOT EXISTS pgp_s.pgp_t2 (id int); CREATE OR REPLACE FUNCTION pgp_f(integer) RETURNS integer LANGUAGE sql AS \$\$ SELECT 1 \$\$') }}
    - env:
      - PGPASSWORD: '@PGPASS@'
    - unless: >-
        {{ psql('pgp_db', 'SELECT 1/count(*) FROM pg_class WHERE relname = \'pgp_t2\'') }}
    - require:
      - postgres_database: pgp_db

pgp_table:
  postgres_privileges.present:
    - name: pgp_role
    - object_name: pgp_t
    - object_type: table
    - privileges: [SELECT, INSERT]
    - maintenance_db: pgp_db
    - require:
      - cmd: pgp_objects
      - postgres_user: pgp_role
    {{- conn() }}

pgp_table_again:
  postgres_privileges.present:
    - name: pgp_role
    - object_name: pgp_t
    - object_type: table
    - privileges: [SELECT]
    - maintenance_db: pgp_db
    - require:
      - postgres_privileges: pgp_table
    {{- conn() }}

pgp_sequence:
  postgres_privileges.present:
    - name: pgp_role
    - object_name: pgp_t_id_seq
    - object_type: sequence
    - privileges: [USAGE, SELECT]
    - maintenance_db: pgp_db
    - require:
      - cmd: pgp_objects
    {{- conn() }}

pgp_schema:
  postgres_privileges.present:
    - name: pgp_role
    - object_name: pgp_s
    - object_type: schema
    - privileges: [USAGE]
    - maintenance_db: pgp_db
    - require:
      - cmd: pgp_objects
    {{- conn() }}

pgp_database:
  postgres_privileges.present:
    - name: pgp_role
    - object_name: pgp_db
    - object_type: database
    - privileges: [CONNECT, TEMPORARY]
    - require:
      - postgres_database: pgp_db
    {{- conn() }}

pgp_function:
  postgres_privileges.present:
    - name: pgp_role
    - object_name: pgp_f(integer)
    - object_type: function
    - privileges: [EXECUTE]
    - maintenance_db: pgp_db
    - require:
      - cmd: pgp_objects
    {{- conn() }}

pgp_membership:
  postgres_privileges.present:
    - name: pgp_role
    - object_name: pgp_group
    - object_type: group
    - grant_option: true
    - require:
      - postgres_group: pgp_group
      - postgres_user: pgp_role
    {{- conn() }}

pgp_revoke_insert:
  postgres_privileges.absent:
    - name: pgp_role
    - object_name: pgp_t
    - object_type: table
    - privileges: [INSERT]
    - maintenance_db: pgp_db
    - require:
      - postgres_privileges: pgp_table_again
    {{- conn() }}

pgp_revoke_never_granted:
  postgres_privileges.absent:
    - name: pgp_role
    - object_name: pgp_db
    - object_type: database
    - privileges: [CREATE]
    - require:
      - postgres_privileges: pgp_database
    {{- conn() }}

pgp_leave_group:
  postgres_privileges.absent:
    - name: pgp_role
    - object_name: pgp_group
    - object_type: group
    - require:
      - postgres_privileges: pgp_membership
    {{- conn() }}
