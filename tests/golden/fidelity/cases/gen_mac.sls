# gen_mac: the prefix as given (not checked, not upper-cased), then three random bytes in upper-case
# hex, each drawn over the whole 0-255 range. A call on a constant is made once when the template
# is compiled (Jinja folds constants), so a loop repeats one address; on a variable, each call draws.
{% set p = 'ab:cd:ef' %}
{% set folded = [] %}{% set drawn = [] %}
{% for i in range(6000) %}{% do folded.append('52:54:00' | gen_mac) %}{% do drawn.append(p | gen_mac) %}{% endfor %}
{% set bytes = {3: [], 4: [], 5: []} %}
{% for m in drawn %}{% for i in (3, 4, 5) %}{% do bytes[i].append(m.split(':')[i]) %}{% endfor %}{% endfor %}
macs:
  test.nop:
    - default_length: {{ 'AC:DE:48' | gen_mac | length }}
    - empty_prefix: {{ ('' | gen_mac | length, ('' | gen_mac)[:1]) | list | tojson }}
    - short_prefix: {{ (('00:50' | gen_mac)[:6], '00:50' | gen_mac | length) | list | tojson }}
    - prefix_kept: {{ (p | gen_mac)[:9] | tojson }}
    - form: {{ drawn | select('match', '^ab:cd:ef(:[0-9A-F]{2}){3}$') | list | length }}
    - folded: {{ folded | unique | list | length }}
    - many_drawn: {{ (drawn | unique | list | length) > 5900 }}
    - byte_values: {{ bytes.values() | map('unique') | map('list') | map('length') | list | tojson }}
    - byte_range: {{ (bytes.values() | map('min') | list, bytes.values() | map('max') | list) | list | tojson }}
