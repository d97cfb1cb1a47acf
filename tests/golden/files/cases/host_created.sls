{#- a hosts file that does not exist yet is created by the first write. #}
created:
  host.present:
    - name: first.example
    - ip: 10.9.9.9
    - comment: first
only_new:
  host.only:
    - name: 10.9.9.8
    - hostnames:
      - a.example
      - b.example
