base:
  'golden':
    - webapp
