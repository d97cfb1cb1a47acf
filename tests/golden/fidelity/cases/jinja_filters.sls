# The Jinja filters issue 10 added, on values whose answers do not vary.
{% set table = "+----+------+\n| id | name |\n+----+------+\n|  1 | foo  |\n|  2 | bar  |\n+----+------+" %}
filters:
  test.nop:
    - encoded: "{{ {'a': 'b', 'l': ['x', 2]} | json_encode_dict }}"
    - encoded_list: "{{ ['a', 1, {'b': 'c'}] | json_decode_list }}"
    - mysql: "{{ table.splitlines() | mysql_to_dict('id') }}"
    - date: {{ 1040814000 | strftime('%Y-%m-%d') }}
    - mac_length: {{ 'AC:DE:48' | gen_mac | length }}
    - root_uid: {{ 'root' | get_uid }}
    - sandbox_files: {{ '@SANDBOX@' | list_files | tojson }}
    - sandbox_is_text: {{ '@SANDBOX@/nothing' | is_text_file }}
    - offline: {{ 'http://127.0.0.1:1/x' | http_query | tojson }}
