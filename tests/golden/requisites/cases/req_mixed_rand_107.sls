# a small random mix of requisites (issue 10: loops mixing require, prereq, use, onchanges, watch)
s0:
  test.fail_with_changes:
  - order: 10000
  - watch:
    - s1
  - use:
    - s2
s1:
  test.fail_without_changes:
  - order: 1
  - onchanges:
    - s1
s2:
  test.succeed_without_changes:
  - order: 10002
  - watch:
    - s0
  - prereq:
    - sls: u
s3:
  test.succeed_with_changes:
  - order: 10003
  - watch:
    - s3
  - prereq:
    - test: s1*
s4:
  test.succeed_with_changes:
  - order: 10004
  - watch:
    - s1
  - onfail:
    - sls: u
s5:
  test.succeed_without_changes:
  - order: 1
  - require_in:
    - s3
  - watch_in:
    - s3
  - watch:
    - sls: u
