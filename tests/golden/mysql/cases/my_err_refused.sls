{%- from "lib/conn.jinja" import conn %}
myerr_refused:
  mysql_database.present:
    {{- conn(port='@MYDEADPORT@') }}

myerr_refused_user:
  mysql_user.absent:
    {{- conn(port='@MYDEADPORT@') }}

myerr_refused_grant:
  mysql_grants.absent:
    - grant: select
    - database: 'x.*'
    - user: nobody
    {{- conn(port='@MYDEADPORT@') }}
