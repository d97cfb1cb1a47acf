t_chg:
  test.succeed_with_changes:
    - prereq_in:
      - test: d_chg_wo
      - test: d_chg_w
t_nochg:
  test.succeed_without_changes:
    - prereq_in:
      - test: d_nochg_wo
      - test: d_nochg_w
t_fail:
  test.fail_without_changes:
    - prereq_in:
      - test: d_fail_wo
      - test: d_fail_w
t_failchg:
  test.fail_with_changes:
    - prereq_in:
      - test: d_failchg_wo
      - test: d_failchg_w
d_chg_wo:
  test.succeed_without_changes: []
d_chg_w:
  test.succeed_with_changes: []
d_nochg_wo:
  test.succeed_without_changes: []
d_nochg_w:
  test.succeed_with_changes: []
d_fail_wo:
  test.succeed_without_changes: []
d_fail_w:
  test.succeed_with_changes: []
d_failchg_wo:
  test.succeed_without_changes: []
d_failchg_w:
  test.succeed_with_changes: []
