"""The one recursive merge (``common/dictupdate.py``) that pillar, ``slsutil.update``/``merge``,
``grains.filter_by`` and ``match.filter_by`` share."""

from __future__ import annotations

from collections import OrderedDict
from types import MappingProxyType

from briny.common.dictupdate import merge, update


def test_update_merges_mappings_and_copies():
    dest = {"a": {"b": 1, "l": [1]}, "x": 1}
    upd = {"a": {"c": 2, "l": [2]}, "y": [1]}
    out = update(dest, upd)
    assert out == {"a": {"b": 1, "c": 2, "l": [2]}, "x": 1, "y": [1]}
    assert dest == {"a": {"b": 1, "l": [1]}, "x": 1}  # inputs untouched
    out["y"].append(9)
    assert upd["y"] == [1]
    assert update(dest, upd, merge_lists=True)["a"]["l"] == [1, 2]


def test_update_takes_any_mapping_as_salt_does():
    dest = OrderedDict(a=MappingProxyType({"b": 1}))
    out = update(dest, {"a": {"c": 2}})
    assert out == {"a": {"b": 1, "c": 2}} and isinstance(out["a"], dict)


def test_merge_strategies():
    a, b = {"k": {"x": 1}, "l": [1]}, {"k": {"y": 2}, "l": [2]}
    assert merge(a, b) == {"k": {"x": 1, "y": 2}, "l": [2]}
    assert merge(a, b, "overwrite") == {"k": {"y": 2}, "l": [2]}
    assert merge(a, b, "list") == {"k": {"x": 1, "y": 2}, "l": [1, 2]}
    assert merge(a, b, "none") is a


def test_match_and_slsutil_use_it(tmp_path):
    from briny.common import loader

    salt = loader.minion_mods({"id": "web1"}, {"os": "Debian"}, {})
    got = salt["match.filter_by"]({"web*": {"a": {"b": 1}}}, tgt_type="glob", merge={"a": {"c": 2}})
    assert got == {"a": {"b": 1, "c": 2}}
    assert salt["slsutil.update"]({"a": {"b": 1}}, {"a": {"c": 2}}) == {"a": {"b": 1, "c": 2}}
    assert salt["slsutil.merge"]({"l": [1]}, {"l": [2]}, merge_lists=True) == {"l": [1, 2]}
