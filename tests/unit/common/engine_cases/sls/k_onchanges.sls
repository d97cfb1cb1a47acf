t_chg:
  test.succeed_with_changes: []
t_nochg:
  test.succeed_without_changes: []
t_fail:
  test.fail_without_changes: []
t_failchg:
  test.fail_with_changes: []
d_chg_wo:
  test.succeed_without_changes:
    - onchanges:
      - test: t_chg
d_chg_w:
  test.succeed_with_changes:
    - onchanges:
      - test: t_chg
d_nochg_wo:
  test.succeed_without_changes:
    - onchanges:
      - test: t_nochg
d_nochg_w:
  test.succeed_with_changes:
    - onchanges:
      - test: t_nochg
d_fail_wo:
  test.succeed_without_changes:
    - onchanges:
      - test: t_fail
d_fail_w:
  test.succeed_with_changes:
    - onchanges:
      - test: t_fail
d_failchg_wo:
  test.succeed_without_changes:
    - onchanges:
      - test: t_failchg
d_failchg_w:
  test.succeed_with_changes:
    - onchanges:
      - test: t_failchg
