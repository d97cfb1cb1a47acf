#!pydsl|stateconf -ps
# the same through stateconf: lib.back_ns (stateconf YAML) includes this file back.
include('lib.back_ns')
state('.inner').test.nop()
