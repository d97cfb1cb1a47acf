{#- host.present with names (one address each: Salt orders the lines of
    several addresses at random) and a per-name address. #}
{%- do salt['file.write']('@SANDBOX@/hosts', "127.0.0.1\t\tlocalhost") %}
web_hosts:
  host.present:
    - ip: 10.5.0.1
    - names:
      - www.example
      - web.example
      - api.example:
        - ip: 10.5.0.2
