#!pydsl
# a pydsl module whose function the including file calls
state('pymod_own').test.nop()

def make(name, **kws):
    state(name).test.succeed_without_changes(**kws)
