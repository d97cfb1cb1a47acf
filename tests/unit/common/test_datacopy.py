"""Deep copies of plain data for each job (common/datacopy.py)."""

from collections import OrderedDict

from briny.common.datacopy import copy_data


def containers(value, seen=None):
    """The ids of every dict, list and set inside ``value``."""
    seen = set() if seen is None else seen
    if isinstance(value, (dict, list, set)):
        seen.add(id(value))
        for item in value.values() if isinstance(value, dict) else value:
            containers(item, seen)
    elif isinstance(value, tuple):
        for item in value:
            containers(item, seen)
    return seen


def test_plain_data_is_copied_all_the_way_down():
    shared = ["10.0.0.1"]
    grains = {
        "os": "Debian",
        "ipv4": shared,
        "again": shared,
        "n": 3,
        "f": 1.5,
        "ok": True,
        "none": None,
        "nested": {"t": (1, [2]), "s": {"a"}, "b": b"\x00"},
    }
    copied = copy_data(grains)
    assert copied == grains and type(copied) is dict
    assert not containers(copied) & containers(grains)  # no container shared with the original
    assert copied["ipv4"] is copied["again"]  # aliasing kept, as deepcopy keeps it
    copied["nested"]["t"][1].append(3)
    assert grains["nested"]["t"] == (1, [2])


def test_what_marshal_cannot_carry_is_deep_copied():
    class Tagged(str):
        pass

    value = {"od": OrderedDict(a=[1]), "tag": Tagged("x")}
    copied = copy_data(value)
    assert copied == value and type(copied["od"]) is OrderedDict and type(copied["tag"]) is Tagged
    assert copied["od"]["a"] is not value["od"]["a"]
