hosts_tpl:
  file.managed:
    - name: @SANDBOX@/hosts.conf
    - source: salt://files/accum.jinja
    - template: jinja

first_entry:
  file.accumulated:
    - name: entries
    - filename: @SANDBOX@/hosts.conf
    - text: alpha
    - require_in:
      - file: hosts_tpl

second_entry:
  file.accumulated:
    - name: entries
    - filename: @SANDBOX@/hosts.conf
    - text:
      - beta
      - gamma
    - require_in:
      - file: hosts_tpl

other_acc:
  file.accumulated:
    - name: others
    - filename: @SANDBOX@/hosts.conf
    - text: delta
    - watch_in:
      - file: hosts_tpl

block_file:
  file.managed:
    - name: @SANDBOX@/block.conf
    - contents: |
        top
        # START
        # END
        bottom

block:
  file.blockreplace:
    - name: @SANDBOX@/block.conf
    - marker_start: "# START"
    - marker_end: "# END"
    - content: from the state
    - require:
      - file: block_file

block_acc:
  file.accumulated:
    - name: block-acc
    - filename: @SANDBOX@/block.conf
    - text:
      - accumulated one
      - accumulated two
    - require_in:
      - file: block

orphan:
  file.accumulated:
    - name: lonely
    - filename: @SANDBOX@/lonely.conf
    - text: nobody
