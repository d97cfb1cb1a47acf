grains_refresh:
  test.succeed_with_changes:
    - reload_grains: true
    - reload_modules: true
    - reload_pillar: true
grains_read:
  test.nop: []
