{#- Where briny deliberately differs from Salt 3007 (see states/host.py and
    minion/sysfiles/hosts.py): adding a name keeps blank lines, spacing and
    other lines of the same address as they are (Salt rewrites the whole
    file), and an address that is not one is refused (Salt writes it). #}
{%- do salt['file.write']('@SANDBOX@/hosts', "# comment\n\n127.0.0.1   localhost\n10.2.0.1 one.example\n10.2.0.1 two.example # second line\n") %}
add:
  host.present:
    - name: three.example
    - ip: 10.2.0.1
bad_ip:
  host.present:
    - name: web.example
    - ip: 10.2.0.300
