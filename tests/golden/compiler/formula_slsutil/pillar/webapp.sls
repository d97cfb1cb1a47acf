webapp:
  root: /opt/webapp
  packages:
    - gunicorn
  settings:
    workers: {{ 2 * 3 }}
