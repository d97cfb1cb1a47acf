app-config:
  test.nop:
    - name: {{ pillar['app']['name'] }}
    - port: {{ salt['pillar.get']('app:ports:http', 80) }}
    - tls_port: {{ salt['pillar.get']('app:ports:https', 443) }}
    - missing: {{ salt['pillar.get']('nope:deeper', 'fallback') }}
    - admins: {{ salt['pillar.get']('app:admins', []) | json }}
    - from_minion_file: {{ pillar.get('minion_only', 'absent') }}
    - cli: {{ salt['pillar.get']('app:cli', 'no-cli') }}
    - override: {{ pillar.get('override') }}
    - role: {{ salt['pillar.get']('role') }}

{%- for user, info in salt['pillar.get']('app:users', {}) | dictsort %}
app-user-{{ user }}:
  user.present:
    - name: {{ user }}
    - shell: {{ info.shell | default('/bin/sh') }}
{%- endfor %}
