nano_stuff:
  test.succeed_with_changes:
    - name: nano
    - fire_event: True

custom_tag:
  test.succeed_without_changes:
    - fire_event: custom/tag/nano/finished
