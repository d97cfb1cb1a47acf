#!pydsl
# __pydsl__.set(ordered=True): each function declaration requires the one made before it.
include('lib.plain')
extend(state('plain_a').test.require(test='plain_b'))

__pydsl__.set(ordered=True)

for i in range(3):
    state(str(i)).test.succeed_without_changes('n' + str(i))
state('1').test.succeed_without_changes(extra='later')
state('last').cmd.run('echo last', cwd='/')
