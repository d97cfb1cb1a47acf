# The example app: a folder, one config file per site (a Jinja loop over
# pillar), an index built from them, and a reload that runs only on change.
include:
  - .layout

{%- from "example/map.jinja" import app with context %}

{% for site in app.sites %}
example-site-{{ site.name }}:
  file.managed:
    - name: {{ app.root }}/sites/{{ site.name }}.conf
    - contents: |
        # {{ app.owner_note }}
        server_name {{ site.name }};
        listen {{ site.port }};
    - makedirs: True
    - require:
      - file: example-root
    - watch_in:
      - cmd: example-reload
{% endfor %}

example-index:
  file.managed:
    - name: {{ app.root }}/index.txt
    - contents:
      {%- for site in app.sites %}
      - {{ site.name }}:{{ site.port }}
      {%- endfor %}
    - require:
      - sls: example.layout
    - fire_event: True

example-reload:
  cmd.wait:
    - name: {{ app.service_cmd }} > {{ app.root }}/last-reload

example-report:
  test.succeed_without_changes:
    - name: {{ app.sites | length }} sites configured under {{ app.root }}
    - fire_event: example/report
    - onchanges:
      - file: example-index
