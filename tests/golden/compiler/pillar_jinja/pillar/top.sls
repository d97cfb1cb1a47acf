base:
  '*':
    - app
  'golden':
    - minion
  'G@role:nothing':
    - match: compound
    - never
