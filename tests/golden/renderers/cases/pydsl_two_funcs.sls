#!pydsl
state('a').test.nop()
state('a').test.succeed_without_changes()
