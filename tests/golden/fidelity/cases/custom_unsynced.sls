# The tree's own _states and _modules are not loaded by a state.sls that syncs nothing (Salt
# loads them on a highstate, after saltutil.sync_*, or with sync_mods=): the state is "not
# available", as in Salt, and the state that does not need it still runs.
uses_custom:
  fidcustom.present:
    - name: thing
plain:
  test.succeed_without_changes:
    - name: plain
