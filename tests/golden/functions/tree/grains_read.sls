appended:
  grains.append:
    - name: appendme
    - value: c

read_back:
  module.run:
    - grains.get:
      - appendme
    - require:
      - grains: appended

read_serial:
  module.run:
    - dnsutil.serial:
      - zone: read.example
      - update: True
