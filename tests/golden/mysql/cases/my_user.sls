{%- from "lib/conn.jinja" import conn %}
myu_pw:
  mysql_user.present:
    - password: s3cret
    {{- conn() }}

myu_pw_other_host:
  mysql_user.present:
    - name: myu_pw
    - host: '%'
    - password: s3cret
    {{- conn() }}

myu_hash:
  mysql_user.present:
    - password_hash: '*B3B7C2C1F6D1A05C3D0D8C7C8AEE9F1E0D3E9C0A'
    {{- conn() }}

myu_nopw:
  mysql_user.present:
    - allow_passwordless: true
    {{- conn() }}

myu_missing_password:
  mysql_user.present:
    {{- conn() }}

myu_change_create:
  mysql_user.present:
    - name: myu_change
    - password: first
    {{- conn() }}

myu_change_second:
  mysql_user.present:
    - name: myu_change
    - password: second
    - require:
      - mysql_user: myu_change_create
    {{- conn() }}

myu_doomed_create:
  mysql_user.present:
    - name: myu_doomed
    - password: x
    {{- conn() }}

myu_doomed:
  mysql_user.absent:
    - require:
      - mysql_user: myu_doomed_create
    {{- conn() }}

myu_never_there:
  mysql_user.absent:
    - host: '%'
    {{- conn() }}
