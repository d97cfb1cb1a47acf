#!pydsl
include('no.such.sls')
state('a').test.nop()
