{%- from "lib/conn.jinja" import conn %}
pgd_owner:
  postgres_user.present:
    {{- conn() }}

pgd_owner2:
  postgres_user.present:
    {{- conn() }}

pgd_main_create:
  postgres_database.present:
    - name: pgd_main
    - owner: pgd_owner
    - encoding: UTF8
    - lc_collate: C
    - lc_ctype: C
    - template: template0
    - require:
      - postgres_user: pgd_owner
    {{- conn() }}

pgd_main_new_owner:
  postgres_database.present:
    - name: pgd_main
    - owner: pgd_owner2
    - require:
      - postgres_database: pgd_main_create
      - postgres_user: pgd_owner2
    {{- conn() }}

pgd_main_wrong_encoding:
  postgres_database.present:
    - name: pgd_main
    - encoding: LATIN1
    - require:
      - postgres_database: pgd_main_new_owner
    {{- conn() }}

pgd_plain:
  postgres_database.present:
    {{- conn() }}

pgd_doomed_create:
  postgres_database.present:
    - name: pgd_doomed
    {{- conn() }}

pgd_doomed:
  postgres_database.absent:
    - require:
      - postgres_database: pgd_doomed_create
    {{- conn() }}

pgd_never_there:
  postgres_database.absent:
    {{- conn() }}
