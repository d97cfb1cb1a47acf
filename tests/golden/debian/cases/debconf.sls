# debconf.set / set_file on a throwaway package name; the last state purges
# its answers so the debconf database is as it was.
answers:
  debconf.set:
    - name: brinygolden-pkg
    - data:
        'brinygolden-pkg/str': {'type': 'string', 'value': 'hello world'}
        'brinygolden-pkg/flag': {'type': 'boolean', 'value': True}
        'brinygolden-pkg/sel': {'type': 'select', 'value': 'b'}
answers_again:
  debconf.set:
    - name: brinygolden-pkg
    - data:
        'brinygolden-pkg/str': {'type': 'string', 'value': 'hello world'}
        'brinygolden-pkg/flag': {'type': 'boolean', 'value': True}
one_changed:
  debconf.set:
    - name: brinygolden-pkg
    - data:
        'brinygolden-pkg/str': {'type': 'string', 'value': 'hello world'}
        'brinygolden-pkg/flag': {'type': 'boolean', 'value': False}
from_file:
  debconf.set_file:
    - source: salt://files/debconf.selections
from_template:
  debconf.set_file:
    - source: salt://files/debconf.selections.j2
    - template: jinja
    - context:
        answer: from the template
missing_file:
  debconf.set_file:
    - source: salt://files/no-such.selections
bad_context:
  debconf.set_file:
    - source: salt://files/debconf.selections
    - context: not a dict
show:
  module.run:
    - name: debconf.show
    - m_name: brinygolden-pkg
purge:
  cmd.run:
    - name: echo PURGE | debconf-communicate brinygolden-pkg
