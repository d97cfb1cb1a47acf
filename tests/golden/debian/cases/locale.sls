# locale.present / locale.system with a locale few hosts have (kw_GB.UTF-8; fy_DE.UTF-8
# is listed in SUPPORTED as "fy_DE UTF-8", so that name fails, as in Salt);
# /etc/locale.gen and /etc/default/locale are copied first and put back last,
# and locale-gen then rebuilds exactly what the host had.
backup:
  cmd.run:
    - name: mkdir -p /run/brinygolden-locale && cp -a /etc/locale.gen /etc/default/locale /run/brinygolden-locale/
present:
  locale.present:
    - name: kw_GB.UTF-8
present_again:
  locale.present:
    - name: kw_GB.UTF-8
not_in_that_form:
  locale.present:
    - name: fy_DE.UTF-8
unknown:
  locale.present:
    - name: xx_YY.UTF-8
system:
  locale.system:
    - name: kw_GB.UTF-8
system_again:
  locale.system:
    - name: kw_GB.UTF-8
show:
  cmd.run:
    - name: grep '^LANG=' /etc/default/locale; grep -c '^kw_GB.UTF-8 UTF-8' /etc/locale.gen; locale -a | grep -c kw_GB
restore:
  cmd.run:
    - name: cp /run/brinygolden-locale/locale.gen /etc/locale.gen && cp /run/brinygolden-locale/locale /etc/default/locale && rm -r /run/brinygolden-locale && locale-gen >/dev/null
