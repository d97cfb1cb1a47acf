{#- a macro file that reads grains, imported without "with context" #}
{%- from 'webapp/macros.jinja' import setting_file %}
{{ setting_file('plain', 1) }}
