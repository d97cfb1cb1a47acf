# file.recurse hands its extra keyword arguments (but `mode` and `makedirs`) to file.managed
# for each file, so each templated file sees them, under `defaults` and `context`.
recurse_template:
  file.recurse:
    - name: @SANDBOX@/tree
    - source: salt://files/ttree
    - template: jinja
    - file_mode: '0600'
    - defaults: {dd: default, kd: default}
    - context: {shadow: context}
    - config: {port: 9090}
    - flag: recurse
    - shadow: kwarg
    - kd: kwarg
