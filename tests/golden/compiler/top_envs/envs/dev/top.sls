dev:
  '*':
    - devextra
base:
  '*':
    - from_dev_top
