# salt.mod.fun(...) where mod exists but fun does not.
{% set x = salt.test.nosuch('a') %}
x:
  test.nop
