#!jinja|json
{
  "json-state": {
    "test.nop": [
      {"count": {{ [1, 2, 3] | length }}},
      {"who": "{{ grains['id'] }}"}
    ]
  }{% for i in range(2) %},
  "json-loop-{{ i }}": {"test.nop": []}{% endfor %}
}
