# a small random mix of requisites (issue 10: loops mixing require, prereq, use, onchanges, watch)
s0:
  test.succeed_without_changes:
  - order: 1
s1:
  test.fail_without_changes:
  - order: 10001
  - onfail:
    - s0
  - require_any:
    - s0
  - watch:
    - s0
s2:
  test.fail_with_changes:
  - order: 10002
  - prereq:
    - s0
  - require:
    - s1
  - use:
    - s1
s3:
  test.fail_without_changes:
  - order: 10003
s4:
  test.fail_with_changes:
  - order: 10004
s5:
  test.succeed_with_changes:
  - order: 10005
  - listen:
    - test: s1*
  - watch_in:
    - s4
  - require_any:
    - s2
s6:
  test.succeed_with_changes:
  - order: 10006
s7:
  test.fail_with_changes:
  - order: 10007
  - prereq:
    - test: s6
  - require_in:
    - s2
s8:
  test.succeed_without_changes:
  - order: 10008
  - onfail_all:
    - s3
