# A templated file.managed gives its template its own arguments (name, source, user, group,
# mode, attrs, saltenv) and every extra keyword argument of the state as variables, with
# `defaults`, then `context`, laid over them (the `- context:` then sibling keys pattern of
# public formulas); `contents` rendered as a template sees `defaults` and `context` only.
source_template:
  file.managed:
    - name: @SANDBOX@/source.conf
    - source: salt://files/tvars.j2
    - template: jinja
    - mode: '0640'
    - defaults: {d: default, dd: default, kd: default}
    - context: {d: context, shadow: context}
    - config: {port: 8080}
    - flag: True
    - shadow: kwarg
    - kd: kwarg
siblings_only:
  file.managed:
    - name: @SANDBOX@/siblings.conf
    - source: salt://files/tvars.j2
    - template: jinja
    - config: {port: 8081}
contents_template:
  file.managed:
    - name: @SANDBOX@/contents.conf
    - template: jinja
    - defaults: {dd: default}
    - context: {d: context}
    - config: {port: 8082}
    - contents: |
        {%- raw %}
        name={{ name if name is defined else 'UNDEF' }} source={{ source if source is defined else 'UNDEF' }}
        config={{ config.port if config is defined else 'UNDEF' }} d={{ d if d is defined else 'UNDEF' }}
        dd={{ dd if dd is defined else 'UNDEF' }} saltenv={{ saltenv if saltenv is defined else 'UNDEF' }}
        user={{ user if user is defined else 'UNDEF' }} mode={{ mode if mode is defined else 'UNDEF' }}
        {%- endraw %}
