# file.blockreplace and file.append render a template source with `defaults` and `context`
# only: none of the state's own arguments reach it (they take no extra keyword arguments).
block_target:
  file.managed:
    - name: @SANDBOX@/block.conf
    - contents: |
        before
        #-- start managed zone --
        #-- end managed zone --
        after
block_template:
  file.blockreplace:
    - name: @SANDBOX@/block.conf
    - source: salt://files/tvars.j2
    - defaults: {d: default, dd: default}
    - context: {d: context, shadow: context}
    - require:
      - file: block_target
append_template:
  file.append:
    - name: @SANDBOX@/append.conf
    - makedirs: True
    - source: salt://files/tvars.j2
    - defaults: {dd: default}
    - context: {shadow: context}
