{%- from "lib/conn.jinja" import conn %}
myg_db:
  mysql_database.present:
    {{- conn() }}

myg_under_score:
  mysql_database.present:
    {{- conn() }}

myg_user:
  mysql_user.present:
    - password: pw
    {{- conn() }}

myg_select_insert:
  mysql_grants.present:
    - grant: select,insert
    - database: myg_db.*
    - user: myg_user
    - require:
      - mysql_user: myg_user
      - mysql_database: myg_db
    {{- conn() }}

myg_update_with_option:
  mysql_grants.present:
    - grant: UPDATE
    - database: myg_db.*
    - user: myg_user
    - grant_option: true
    - require:
      - mysql_grants: myg_select_insert
    {{- conn() }}

myg_all_escaped:
  mysql_grants.present:
    - grant: all privileges
    - database: myg_under_score.*
    - user: myg_user
    - require:
      - mysql_user: myg_user
      - mysql_database: myg_under_score
    {{- conn() }}

myg_global:
  mysql_grants.present:
    - grant: process, replication client
    - database: '*.*'
    - user: myg_user
    - require:
      - mysql_user: myg_user
    {{- conn() }}

myg_revoke_insert:
  mysql_grants.absent:
    - grant: insert
    - database: myg_db.*
    - user: myg_user
    - require:
      - mysql_grants: myg_update_with_option
    {{- conn() }}

myg_revoke_never_granted:
  mysql_grants.absent:
    - grant: delete
    - database: myg_db.*
    - user: myg_user
    - require:
      - mysql_grants: myg_select_insert
    {{- conn() }}
