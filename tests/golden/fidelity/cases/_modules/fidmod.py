"""A custom execution module of the tree (see _states/fidcustom.py)."""


def hello():
    return "hello from fidmod"
