#!pydsl
# includes lib.back, whose YAML includes this file back: this file is not yet known as rendered
# while it renders, so it is rendered a second time, and its two _slsmod_ entries conflict.
state('back_first').test.nop()
include('lib.back')
state('back_second').test.succeed_without_changes()
def unused():
    pass
