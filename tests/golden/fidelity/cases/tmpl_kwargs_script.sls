# cmd.script hands its extra keyword arguments to the execution function, which renders the
# template with them, `context` (laid over `defaults`) over them.
script_template:
  cmd.script:
    - name: tscript
    - source: salt://files/tscript.sh
    - template: jinja
    - cwd: @SANDBOX@
    - defaults: {d: default, dd: default, kd: default}
    - context: {d: context, shadow: context}
    - config: {port: 7070}
    - flag: True
    - shadow: kwarg
    - kd: kwarg
