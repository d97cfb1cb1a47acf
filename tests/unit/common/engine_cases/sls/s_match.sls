Deploy server package:
  test.succeed_with_changes:
    - name: /usr/local/share/myapp.tar.xz
Extract by id:
  test.succeed_without_changes:
    - onchanges:
      - test: Deploy server package
Extract by name:
  test.succeed_without_changes:
    - onchanges:
      - test: /usr/local/share/myapp.tar.xz
moduleless:
  test.nop:
    - require:
      - Deploy server package
moduleless name:
  test.nop:
    - require:
      - /usr/local/share/myapp.tar.xz
