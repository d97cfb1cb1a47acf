#!yaml
# no Jinja here: the braces stay as they are
literal:
  test.nop:
    - text: "{{ not_rendered }}"
    - stmt: "{% if x %}y{% endif %}"
