{%- from "lib/conn.jinja" import conn %}
myd_main_create:
  mysql_database.present:
    - name: myd_main
    - character_set: utf8mb4
    - collate: utf8mb4_bin
    {{- conn() }}

myd_main_latin:
  mysql_database.present:
    - name: myd_main
    - character_set: latin1
    - collate: latin1_swedish_ci
    - require:
      - mysql_database: myd_main_create
    {{- conn() }}

myd_plain:
  mysql_database.present:
    {{- conn() }}

myd_doomed_create:
  mysql_database.present:
    - name: myd_doomed
    {{- conn() }}

myd_doomed:
  mysql_database.absent:
    - require:
      - mysql_database: myd_doomed_create
    {{- conn() }}

myd_never_there:
  mysql_database.absent:
    {{- conn() }}
