excl_list:
  file.recurse:
    - name: @SANDBOX@/excl_list
    - source: salt://files/rtree_pat
    - exclude_pat:
      - _*
      - raas.conf
      - '*.skip'
incl_list:
  file.recurse:
    - name: @SANDBOX@/incl_list
    - source: salt://files/rtree_pat
    - include_pat:
      - '*.txt'
      - E@deep/
    - exclude_pat: E@^sub/b
excl_str:
  file.recurse:
    - name: @SANDBOX@/excl_str
    - source: salt://files/rtree_pat
    - exclude_pat: _*
pre_clean:
  file.managed:
    - name: @SANDBOX@/clean/_keep.me
    - contents: k
    - makedirs: True
pre_clean2:
  file.managed:
    - name: @SANDBOX@/clean/gone.txt
    - contents: g
    - makedirs: True
clean_list:
  file.recurse:
    - name: @SANDBOX@/clean
    - source: salt://files/rtree_pat
    - include_pat: '*.txt'
    - exclude_pat:
      - _*
      - E@^sub/
    - clean: True
    - require:
      - file: pre_clean
      - file: pre_clean2
pre_stray:
  file.managed:
    - name: @SANDBOX@/clean2/stray.txt
    - contents: s
    - makedirs: True
pre_stray_keep:
  file.managed:
    - name: @SANDBOX@/clean2/_kept.txt
    - contents: k
    - makedirs: True
clean_unrequired:
  file.recurse:
    - name: @SANDBOX@/clean2
    - source: salt://files/rtree_pat
    - include_pat: 'a.*'
    - exclude_pat:
      - _*
      - '*.skip'
    - clean: True
