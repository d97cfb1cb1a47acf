base:
  '*':
    - timesync
