{%- set sb = '@SANDBOX@' %}
{%- do salt['cmd.run']('/usr/bin/python3 ' ~ salt['cp.cache_file']('salt://lib/mkwheel.py') ~ ' ' ~ sb) %}
{#- the host's pip config (find-links, extra indexes) must not leak into the results #}
{%- set src = {'no_index': True, 'find_links': sb ~ '/wheels', 'bin_env': sb ~ '/venv',
               'env_vars': {'PIP_CONFIG_FILE': '/dev/null', 'PIP_FIND_LINKS': sb ~ '/wheels'}} %}
install_one:
  pip.installed:
    - name: brinytoy==1.0
    {%- for k, v in src.items() %}
    - {{ k }}: {{ v|json }}
    {%- endfor %}
already:
  pip.installed:
    - name: brinytoy
    {%- for k, v in src.items() %}
    - {{ k }}: {{ v|json }}
    {%- endfor %}
    - require:
      - pip: install_one
upgrade_spec:
  pip.installed:
    - name: brinytoy>=2.0
    {%- for k, v in src.items() %}
    - {{ k }}: {{ v|json }}
    {%- endfor %}
    - require:
      - pip: already
from_requirements:
  pip.installed:
    - name: reqs
    - requirements: salt://files/reqs.txt
    {%- for k, v in src.items() %}
    - {{ k }}: {{ v|json }}
    {%- endfor %}
removed:
  pip.removed:
    - name: brinyother
    - bin_env: {{ sb }}/venv
    - require:
      - pip: from_requirements
removed_absent:
  pip.removed:
    - name: brinynothere
    - bin_env: {{ sb }}/venv
err_missing_requirements:
  pip.installed:
    - name: missing
    - requirements: salt://files/missing.txt
    {%- for k, v in src.items() %}
    - {{ k }}: {{ v|json }}
    {%- endfor %}
err_broken_bin_env:
  pip.installed:
    - name: brinytoy
    - bin_env: {{ sb }}/novenv
err_bad_spec:
  pip.installed:
    - name: brinytoy=1.0
    - bin_env: {{ sb }}/venv
err_not_on_index:
  pip.installed:
    - name: brinynothere
    {%- for k, v in src.items() %}
    - {{ k }}: {{ v|json }}
    {%- endfor %}
