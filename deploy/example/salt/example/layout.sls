{%- from "example/map.jinja" import app with context %}
example-root:
  file.directory:
    - name: {{ app.root }}
    - makedirs: True

example-logs:
  file.directory:
    - name: {{ app.root }}/logs
    - require:
      - file: example-root
