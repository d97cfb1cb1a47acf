# alternatives.install / set / auto / remove on a throwaway name whose link and
# targets live in the sandbox; the last removals leave the host as it was.
bin:
  file.directory:
    - name: @SANDBOX@/bin
{% for n in ('one', 'two') %}
{{ n }}:
  file.managed:
    - name: @SANDBOX@/{{ n }}
    - mode: '0755'
    - contents: '#!/bin/sh'
{% endfor %}
install_one:
  alternatives.install:
    - name: brinygolden-alt
    - link: @SANDBOX@/bin/brinygolden-alt
    - path: @SANDBOX@/one
    - priority: 10
install_one_again:
  alternatives.install:
    - name: brinygolden-alt
    - link: @SANDBOX@/bin/brinygolden-alt
    - path: @SANDBOX@/one
    - priority: 10
install_two:
  alternatives.install:
    - name: brinygolden-alt
    - link: @SANDBOX@/bin/brinygolden-alt
    - path: @SANDBOX@/two
    - priority: 5
set_two:
  alternatives.set:
    - name: brinygolden-alt
    - path: @SANDBOX@/two
set_two_again:
  alternatives.set:
    - name: brinygolden-alt
    - path: @SANDBOX@/two
back_to_auto:
  alternatives.auto:
    - name: brinygolden-alt
auto_again:
  alternatives.auto:
    - name: brinygolden-alt
set_unknown:
  alternatives.set:
    - name: brinygolden-alt
    - path: @SANDBOX@/three
install_missing_target:
  alternatives.install:
    - name: brinygolden-alt
    - link: @SANDBOX@/bin/brinygolden-alt
    - path: @SANDBOX@/nonexistent
    - priority: 5
remove_one:
  alternatives.remove:
    - name: brinygolden-alt
    - path: @SANDBOX@/one
remove_one_again:
  alternatives.remove:
    - name: brinygolden-alt
    - path: @SANDBOX@/one
remove_two:
  alternatives.remove:
    - name: brinygolden-alt
    - path: @SANDBOX@/two
remove_two_again:
  alternatives.remove:
    - name: brinygolden-alt
    - path: @SANDBOX@/two
