web_config:
  test.succeed_without_changes:
    - name: nginx.conf
{% if grains['id'] == 'web2' %}
web_broken:
  test.fail_without_changes:
    - name: broken on web2
{% endif %}
