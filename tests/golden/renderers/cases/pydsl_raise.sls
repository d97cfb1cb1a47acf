#!pydsl
state('never').test.nop()
raise ValueError('pydsl boom')
