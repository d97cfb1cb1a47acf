{%- from "lib/conn.jinja" import conn %}
pgu_group:
  postgres_group.present:
    - createdb: true
    {{- conn() }}

pgu_md5:
  postgres_user.present:
    - password: s3cret
    - createdb: true
    - login: true
    - groups: pgu_group
    - valid_until: '2031-01-01 00:00:00'
    - require:
      - postgres_group: pgu_group
    {{- conn() }}

pgu_scram:
  postgres_user.present:
    - password: 'another:secret'
    - encrypted: scram-sha-256
    - createroles: true
    - replication: true
    - inherit: false
    {{- conn() }}

pgu_default_pw:
  postgres_user.present:
    - default_password: firstonly
    - login: false
    {{- conn() }}

pgu_changed_first:
  postgres_user.present:
    - name: pgu_changed
    {{- conn() }}

pgu_changed_second:
  postgres_user.present:
    - name: pgu_changed
    - createdb: true
    - superuser: true
    - password: newpass
    - groups: [pgu_group]
    - require:
      - postgres_user: pgu_changed_first
      - postgres_group: pgu_group
    {{- conn() }}

pgu_doomed_create:
  postgres_user.present:
    - name: pgu_doomed
    {{- conn() }}

pgu_doomed:
  postgres_user.absent:
    - require:
      - postgres_user: pgu_doomed_create
    {{- conn() }}

pgu_never_there:
  postgres_user.absent:
    {{- conn() }}

pgu_group_doomed_create:
  postgres_group.present:
    - name: pgu_group_doomed
    {{- conn() }}

pgu_group_doomed:
  postgres_group.absent:
    - require:
      - postgres_group: pgu_group_doomed_create
    {{- conn() }}
