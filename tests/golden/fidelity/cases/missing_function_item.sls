# A template calling a function that does not exist: Salt names it, at the calling line.
{% set ok = salt['test.ping']() %}
{% set x = salt['nosuchmod.fun']('a') %}
x:
  test.nop
