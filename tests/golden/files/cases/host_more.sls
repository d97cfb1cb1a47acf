{#- hosts: a list of addresses, a comment changed on an existing entry,
    host.only emptying an address, a malformed line left alone. #}
{%- do salt['file.write']('@SANDBOX@/hosts', "127.0.0.1\t\tlocalhost\n10.1.0.1\t\tdb.example\t\t# old comment\n10.1.0.2\t\tapp.example\n10.1.0.3\t\tgone1 gone2\nnot-an-address\n192.0.2.1\t\tmulti.example") %}
list:
  host.present:
    - name: app.example
    - ip:
      - 10.1.0.2
comment_changed:
  host.present:
    - name: db.example
    - ip: 10.1.0.1
    - comment: new comment
only_empty:
  host.only:
    - name: 10.1.0.3
    - hostnames: []
absent_list:
  host.absent:
    - name: multi.example
    - ip:
      - 192.0.2.1
