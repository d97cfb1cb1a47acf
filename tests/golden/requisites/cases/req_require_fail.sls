broken-pkg:
  cmd.run:
    - name: "false"

service-needs-pkg:
  test.succeed_with_changes:
    - require:
      - cmd: broken-pkg

needs-the-needer:
  test.succeed_without_changes:
    - require:
      - test: service-needs-pkg

unrelated:
  test.succeed_without_changes: []
