#!jinja|yaml
explicit-{{ sls }}:
  test.nop:
    - rendered_by: jinja then yaml
