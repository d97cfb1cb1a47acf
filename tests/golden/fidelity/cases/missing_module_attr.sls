# salt.mod.fun(...) where there is no such module.
{% set x = salt.nosuchmod.fun('a') %}
x:
  test.nop
