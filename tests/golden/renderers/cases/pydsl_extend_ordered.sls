#!pydsl
__pydsl__.set(ordered=True)
state('a').test.nop()
extend(state('b').test.require(test='a'))
