#!pydsl
state('x').test.require(test='y')
