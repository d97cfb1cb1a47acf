#!pydsl
# state(), the two ways to name a function, requisites on a declaration and a
# function, and what the module sees (__grains__, __salt__, __sls__, __env__).
first = state('first')
first.test.succeed_without_changes()

state('write').file.managed('@SANDBOX@/out.txt', contents=__sls__ + ' ' + __env__ + ' ' + __grains__['os_family']).require(test='first')

second = state('second')
second.test('succeed_with_changes', 'second-name')
second.test.require(first.test)

state('echo').cmd.run('echo ' + __salt__['test.echo']('hi')).require(file='write').watch(test='second')

assert state('first') is first and first.test is state('first').test
state('nameless').test.nop(foo=1, bar=[1, 2])
