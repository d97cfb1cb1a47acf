# the list_files Jinja filter: the folder itself, and every file and folder under it (Salt's
# order is a Python set's, so the lists are sorted here); a file or a missing path: itself.
{% set root = '@SANDBOX@/../srv/files/listme' %}
listed:
  test.nop:
    - folder: {{ root | list_files | sort | tojson }}
    - slash: {{ (root ~ '/') | list_files | sort | tojson }}
    - file: {{ (root ~ '/a.txt') | list_files | tojson }}
    - missing: {{ (root ~ '/nothing') | list_files | tojson }}
