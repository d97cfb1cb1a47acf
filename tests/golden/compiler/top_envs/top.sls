base:
  '*':
    - core
dev:
  'golden':
    - devapp
prod:
  'nomatch':
    - prodapp
