# fire_event: True (the state's name in the tag) and a custom tag
plain:
  test.succeed_with_changes:
    - fire_event: True
custom:
  test.succeed_without_changes:
    - fire_event: golden/custom
