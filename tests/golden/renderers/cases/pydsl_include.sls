#!pydsl
# include renders now and returns the pydsl modules (None for others); delayed=True
# leaves an include declaration.
plain, mod = include('lib.plain', 'lib.pymod')
assert plain is None
mod.make('made_by_pymod', marker=1)
include('lib.late', delayed=True)
state('mine').test.succeed_without_changes().require(test='plain_a')
