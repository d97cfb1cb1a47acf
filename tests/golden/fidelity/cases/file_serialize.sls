{% set d = '@SANDBOX@' %}
pre_merge_json:
  file.managed:
    - name: {{ d }}/merge.json
    - contents: '{"keep": 1, "nested": {"a": 1, "b": [1, 2]}}'
    - replace: False
pre_bad_json:
  file.managed:
    - name: {{ d }}/bad.json
    - contents: 'not json {'
    - replace: False
pre_merge_plist:
  file.serialize:
    - name: {{ d }}/merge.plist
    - dataset: {old: 1}
    - serializer: plist
    - create: True
yaml:
  file.serialize:
    - name: {{ d }}/a.yaml
    - dataset: {b: 2, a: [1, 2], c: {x: y}, u: "héllo"}
json:
  file.serialize:
    - name: {{ d }}/a.json
    - dataset: {b: 2, a: [1, 2], u: "héllo"}
    - serializer: json
json_enc:
  file.serialize:
    - name: {{ d }}/enc.json
    - dataset: {u: "héllo"}
    - serializer: json
    - encoding: utf-8
yaml_enc:
  file.serialize:
    - name: {{ d }}/enc.yaml
    - dataset: {u: "héllo"}
    - encoding: utf-8
yaml_opts:
  file.serialize:
    - name: {{ d }}/opts.yaml
    - dataset: {a: {b: [1, 2]}}
    - serializer_opts:
      - explicit_start: True
      - indent: 4
python:
  file.serialize:
    - name: {{ d }}/a.py
    - dataset: {b: 2, a: [1, 2]}
    - serializer: python
msgpack:
  file.serialize:
    - name: {{ d }}/a.msgpack
    - dataset: {b: 2, a: [1, 2]}
    - serializer: msgpack
plist:
  file.serialize:
    - name: {{ d }}/a.plist
    - dataset: {b: 2, a: [1, 2]}
    - serializer: plist
configparser:
  file.serialize:
    - name: {{ d }}/a.ini
    - dataset: {main: {b: 2, a: x}, other: {k: v}}
    - serializer: configparser
keyvalue:
  file.serialize:
    - name: {{ d }}/a.env
    - dataset: {B: "2", A: "x y"}
    - serializer: keyvalue
    - serializer_opts:
      - quoting: True
toml:
  file.serialize:
    - name: {{ d }}/a.toml
    - dataset: {a: 1}
    - serializer: toml
both:
  file.serialize:
    - name: {{ d }}/both
    - dataset: {a: 1}
    - serializer: json
    - formatter: yaml
merge_json:
  file.serialize:
    - name: {{ d }}/merge.json
    - dataset: {new: 2, nested: {b: [3], c: 4}}
    - serializer: json
    - merge_if_exists: True
    - require:
      - file: pre_merge_json
merge_bad:
  file.serialize:
    - name: {{ d }}/bad.json
    - dataset: {new: 2}
    - serializer: json
    - merge_if_exists: True
    - require:
      - file: pre_bad_json
merge_python:
  file.serialize:
    - name: {{ d }}/merge.json
    - dataset: {new: 2}
    - serializer: python
    - merge_if_exists: True
    - require:
      - file: pre_merge_json
merge_plist:
  file.serialize:
    - name: {{ d }}/merge.plist
    - dataset: {new: 2}
    - serializer: plist
    - merge_if_exists: True
    - require:
      - file: pre_merge_plist
deser_warn:
  file.serialize:
    - name: {{ d }}/warn.yaml
    - dataset: {a: 1}
    - deserializer_opts:
      - encoding: latin-1
noshow:
  file.serialize:
    - name: {{ d }}/noshow.yaml
    - dataset: {a: 1}
    - show_changes: False
empty:
  file.serialize:
    - name: {{ d }}/empty.yaml
    - dataset: {}
nodata:
  file.serialize:
    - name: {{ d }}/nodata.yaml
check_bad:
  file.serialize:
    - name: {{ d }}/check_bad.json
    - dataset: {a: 1}
    - serializer: json
    - check_cmd: /bin/false
nocreate:
  file.serialize:
    - name: {{ d }}/nocreate.yaml
    - dataset: {a: 1}
    - create: False
