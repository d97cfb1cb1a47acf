base:
  '*':
    - flat
    - paths
    - paths.deep
    - paths.deep.inner
