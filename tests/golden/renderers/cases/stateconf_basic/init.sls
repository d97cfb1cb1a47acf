#!stateconf -os yaml . jinja
# sls_params, the end marker, .ids (renamed, name added), start/goal, -o ordering
.sls_params:
  stateconf.set:
    - greeting: hello
    - who: world

# --- end of state config ---

.write:
  file.managed:
    - name: @SANDBOX@/{{ sls_params.greeting }}.txt
    - contents: {{ sls_params.greeting }} {{ sls_params.who }} {{ sls_dir }}

.echo:
  cmd.run:
    - name: echo {{ sls_params.who }}
    - require:
      - file: .write

plain_id:
  test.succeed_without_changes
