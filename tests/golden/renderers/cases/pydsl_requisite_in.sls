#!pydsl
# require_in / watch_in and several references in one call; requisites on the module
state('a').test.succeed_with_changes().require_in(test='c').watch_in(test='d')
state('b').test.succeed_without_changes()
c = state('c')
c.test.require(state('b').test, test='a')
c.test.nop()
state('d').test.nop(name='dee')
