# a small random mix of requisites (issue 10: loops mixing require, prereq, use, onchanges, watch)
s0:
  test.succeed_without_changes:
  - order: 10000
  - onfail_all:
    - s3
s1:
  test.succeed_with_changes:
  - order: 1
  - onchanges:
    - test: s3
  - onfail_all:
    - s2
s2:
  test.fail_with_changes:
  - order: 10002
  - use:
    - s0
  - listen:
    - s1
  - onfail:
    - sls: u
s3:
  test.succeed_without_changes:
  - order: 1
s4:
  test.succeed_with_changes:
  - order: 10004
s5:
  test.succeed_without_changes:
  - order: 1
  - prereq:
    - test: s1*
  - onchanges:
    - s3
