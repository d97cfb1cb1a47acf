stop-volume:
  cmd.run:
    - name: echo stop
    - onlyif:
      - "true"
    - order: 1
remove-volume:
  cmd.run:
    - name: echo remove
    - onlyif:
      - "false"
    - watch:
      - cmd: stop-volume
mixed:
  test.succeed_with_changes:
    - onlyif:
      - "true"
      - "false"
both:
  test.succeed_with_changes:
    - onlyif: "true"
    - unless: "true"
