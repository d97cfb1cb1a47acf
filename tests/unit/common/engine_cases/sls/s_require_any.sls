A:
  cmd.run:
    - name: echo A
    - require_any:
      - cmd: B
      - cmd: C
B:
  cmd.run:
    - name: echo B
C:
  cmd.run:
    - name: /bin/false
