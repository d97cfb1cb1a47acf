# a small random mix of requisites (issue 10: loops mixing require, prereq, use, onchanges, watch)
s0:
  test.succeed_without_changes:
  - order: 10000
s1:
  test.fail_without_changes:
  - order: 1
  - require_in:
    - s5
  - prereq:
    - test: s4
s2:
  test.succeed_without_changes:
  - order: 10002
  - require_in:
    - s1
s3:
  test.succeed_without_changes:
  - order: 10003
  - require_any:
    - s0
    - sls: u
  - watch_in:
    - s4
s4:
  test.succeed_without_changes:
  - order: 10004
  - watch_in:
    - s1
  - use:
    - s3
s5:
  test.fail_with_changes:
  - order: 1
  - require_any:
    - s4
s6:
  test.fail_without_changes:
  - order: 10006
