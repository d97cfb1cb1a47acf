#!pydsl|stateconf -ps
state('.one').test.succeed_without_changes()
state('.two').test.nop().require(test='.one')
