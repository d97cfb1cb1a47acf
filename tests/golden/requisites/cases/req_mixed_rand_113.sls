# a small random mix of requisites (issue 10: loops mixing require, prereq, use, onchanges, watch)
s0:
  test.fail_without_changes:
  - order: 10000
  - require:
    - sls: u
  - prereq:
    - s0
  - onfail_all:
    - test: s1*
s1:
  test.fail_without_changes:
  - order: 10001
  - require:
    - test: s1*
s2:
  test.fail_without_changes:
  - order: 10002
  - use:
    - s4
s3:
  test.fail_with_changes:
  - order: 10003
  - onfail:
    - s3
  - require:
    - s0
s4:
  test.fail_without_changes:
  - order: 10004
  - listen:
    - s0
