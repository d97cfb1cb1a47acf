# timezone.system with zones that do not exist: fails before reading or
# changing anything (Salt 3007 crashes on this host for a real zone: see
# states/timezone.py; tests/integration/test_debian_states.py covers those).
unknown_zone:
  timezone.system:
    - name: Nowhere/Atlantis
unknown_zone_local_clock:
  timezone.system:
    - name: Nowhere/Atlantis
    - utc: False
