t_chg:
  test.succeed_with_changes: []
t_nochg:
  test.succeed_without_changes: []
t_fail:
  test.fail_without_changes: []
t_failchg:
  test.fail_with_changes: []
t_nochg2:
  test.succeed_without_changes: []
d_chg_fail_wo:
  test.succeed_without_changes:
    - onfail:
      - test: t_chg
      - test: t_fail
d_chg_fail_w:
  test.succeed_with_changes:
    - onfail:
      - test: t_chg
      - test: t_fail
d_nochg_fail_wo:
  test.succeed_without_changes:
    - onfail:
      - test: t_nochg
      - test: t_fail
d_nochg_fail_w:
  test.succeed_with_changes:
    - onfail:
      - test: t_nochg
      - test: t_fail
d_fail_failchg_wo:
  test.succeed_without_changes:
    - onfail:
      - test: t_fail
      - test: t_failchg
d_fail_failchg_w:
  test.succeed_with_changes:
    - onfail:
      - test: t_fail
      - test: t_failchg
d_chg_nochg_wo:
  test.succeed_without_changes:
    - onfail:
      - test: t_chg
      - test: t_nochg
d_chg_nochg_w:
  test.succeed_with_changes:
    - onfail:
      - test: t_chg
      - test: t_nochg
d_nochg_nochg2_wo:
  test.succeed_without_changes:
    - onfail:
      - test: t_nochg
      - test: t_nochg2
d_nochg_nochg2_w:
  test.succeed_with_changes:
    - onfail:
      - test: t_nochg
      - test: t_nochg2
