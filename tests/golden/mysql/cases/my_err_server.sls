{%- from "lib/conn.jinja" import conn %}
myerr_wrong_password:
  mysql_database.present:
    {{- conn(password='not-the-password') }}

myerr_wrong_password_user:
  mysql_user.present:
    - password: x
    {{- conn(password='not-the-password') }}

myerr_wrong_password_absent:
  mysql_database.absent:
    {{- conn(password='not-the-password') }}

myerr_unknown_privilege:
  mysql_grants.present:
    - grant: selekt
    - database: 'mysql.*'
    - user: root
    {{- conn() }}

myerr_grant_missing_user:
  mysql_grants.present:
    - grant: select
    - database: 'mysql.*'
    - user: myerr_nobody
    {{- conn() }}
