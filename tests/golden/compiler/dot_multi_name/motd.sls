motd_perms:
  file.managed:
    - name: /etc/motd
    - mode: '0644'

motd_quote:
  file.append:
    - name: /etc/motd
    - text: "Of all smells, bread; of all tastes, salt."
    - require:
      - file: motd_perms
