{%- from "lib/conn.jinja" import conn %}
@PGROOT@/pgt_dir:
  file.directory:
    - user: @PGUSER@
    - mode: '0700'

pgt_owner:
  postgres_user.present:
    {{- conn() }}

pgt_space_create:
  postgres_tablespace.present:
    - name: pgt_space
    - directory: @PGROOT@/pgt_dir
    - owner: pgt_owner
    - options:
        seq_page_cost: 1.5
    - require:
      - file: @PGROOT@/pgt_dir
      - postgres_user: pgt_owner
    {{- conn() }}

pgt_space_again:
  postgres_tablespace.present:
    - name: pgt_space
    - directory: @PGROOT@/pgt_dir
    - require:
      - postgres_tablespace: pgt_space_create
    {{- conn() }}

pgt_never_there:
  postgres_tablespace.absent:
    {{- conn() }}
