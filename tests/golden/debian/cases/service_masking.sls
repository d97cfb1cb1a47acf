# service.masked / unmasked on a unit that does not exist. Salt 3007 in offline
# mode masks it and then fails every state ("Cannot run in offline mode");
# briny answers as Salt does on a host running systemd (a KNOWN_GAPS entry in
# tests/integration/test_golden_debian.py). The last state removes the mask.
# Never a runtime mask here: offline, systemctl would create /run/systemd/system.
mask:
  service.masked:
    - name: brinygolden-masked
mask_again:
  service.masked:
    - name: brinygolden-masked
unmask:
  service.unmasked:
    - name: brinygolden-masked
unmask_again:
  service.unmasked:
    - name: brinygolden-masked
cleanup:
  cmd.run:
    - name: rm -f /etc/systemd/system/brinygolden-masked.service
