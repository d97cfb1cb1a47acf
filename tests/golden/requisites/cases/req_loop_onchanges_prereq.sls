# onchanges and watch mixed with prereq
pre-one:
  test.succeed_without_changes:
    - prereq:
      - changer-one

changer-one:
  test.succeed_with_changes:
    - onchanges:
      - pre-one

pre-two:
  test.succeed_with_changes:
    - prereq:
      - changer-two

changer-two:
  test.succeed_with_changes:
    - watch:
      - pre-two

pre-three:
  test.succeed_without_changes:
    - onchanges:
      - changer-three

changer-three:
  test.succeed_with_changes:
    - prereq:
      - pre-three
