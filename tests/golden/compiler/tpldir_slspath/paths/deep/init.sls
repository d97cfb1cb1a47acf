{% include 'vars.jinja' %}
