{%- do salt['file.write']('@SANDBOX@/hosts', "# static table\n127.0.0.1\t\tlocalhost\n10.0.0.1\t\told.example\t\t# keep me\n10.0.0.2\t\tshared.example other\n::1\t\tip6-localhost") %}
add_new:
  host.present:
    - name: web.example
    - ip: 10.0.0.5
add_alias:
  host.present:
    - name: alias.example
    - ip: 10.0.0.1
with_comment:
  host.present:
    - name: c.example
    - ip: 10.0.0.9
    - comment: managed by salt
present_already:
  host.present:
    - name: localhost
    - ip: 127.0.0.1
warn:
  host.present:
    - name: shared.example
    - ip: 10.0.0.7
clean:
  host.present:
    - name: other
    - ip: 10.0.0.8
    - clean: True
gone:
  host.absent:
    - name: old.example
    - ip: 10.0.0.1
gone_already:
  host.absent:
    - name: nothere.example
    - ip: [10.0.0.1, 10.0.0.3]
only:
  host.only:
    - name: ::1
    - hostnames: [localhost6, ip6-localhost]
only_same:
  host.only:
    - name: 127.0.0.1
    - hostnames: localhost
