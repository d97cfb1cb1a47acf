"""``defaults.*`` against what Salt 3007.17 returns for the same calls.

The expected values were recorded by rendering the same template with the
reference Salt (``dev/saltref.sh``): ``merge`` and ``update`` change their
first argument in place by default, ``get`` reads ``salt://<first key
part>/defaults.yaml`` (else ``.json``).
"""

from __future__ import annotations

import json

import pytest

from briny.common.loader import minion_mods


@pytest.fixture
def salt(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "defaults.yaml").write_text("users:\n  root: {uid: 0}\na: 1\n")
    (tmp_path / "onlyjson").mkdir()
    (tmp_path / "onlyjson" / "defaults.json").write_text(json.dumps({"k": {"v": [1, 2]}}))
    (tmp_path / "both").mkdir()
    (tmp_path / "both" / "defaults.yaml").write_text("from: yaml\n")
    (tmp_path / "both" / "defaults.json").write_text('{"from": "json"}')
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "defaults.yaml").write_text("")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "defaults.yaml").write_text("a: [1\n")
    return minion_mods({"id": "m1", "file_client": "local", "file_roots": {"base": [str(tmp_path)]}}, {}, {})


def test_merge_is_in_place_and_replaces_lists(salt):
    a = {"x": {"y": 1, "l": [1, 2]}, "k": 1}
    out = salt["defaults.merge"](a, {"x": {"z": 2, "l": [2, 3]}})
    assert out is a
    assert a == {"k": 1, "x": {"l": [2, 3], "y": 1, "z": 2}}


def test_merge_copy_with_merged_lists(salt):
    a = {"x": {"y": 1, "l": [1, 2]}}
    out = salt["defaults.merge"](a, {"x": {"z": 2, "l": [2, 3]}}, merge_lists=True, in_place=False)
    assert a == {"x": {"l": [1, 2], "y": 1}}
    assert out == {"x": {"l": [1, 2, 3], "y": 1, "z": 2}}


def test_merge_none(salt):
    assert salt["defaults.merge"]({"a": 1}, None) == {"a": 1}
    assert salt["defaults.merge"](None, {"a": 1}, in_place=False) == {"a": 1}
    with pytest.raises(TypeError, match="Can't perform in-place merge into NoneType"):
        salt["defaults.merge"](None, {"a": 1})
    with pytest.raises(TypeError, match="non-dict"):
        salt["defaults.merge"]({"a": 1}, None, convert_none=False)


def test_update_gives_each_node_the_defaults(salt):
    nodes = {"h1": {"i": 1, "l": ["a"]}, "h2": {}}
    out = salt["defaults.update"](nodes, {"enabled": True, "l": ["b"]})
    assert out is nodes
    # merge_lists defaults to True here: the defaults' items first, then the node's new ones
    assert nodes == {"h1": {"enabled": True, "i": 1, "l": ["b", "a"]}, "h2": {"enabled": True, "l": ["b"]}}


def test_update_copy_and_none(salt):
    nodes = {"h1": {"l": ["a"]}}
    out = salt["defaults.update"](nodes, {"l": ["b"]}, merge_lists=False, in_place=False)
    assert nodes == {"h1": {"l": ["a"]}} and out == {"h1": {"l": ["a"]}}
    assert salt["defaults.update"](None, {"a": 1}, in_place=False) == {}
    assert salt["defaults.update"]({"n": None}, None) == {"n": {}}
    with pytest.raises(TypeError, match="Can't perform in-place update into NoneType"):
        salt["defaults.update"](None, {"a": 1})


def test_deepcopy(salt):
    src = {"a": [1, {"b": 2}]}
    out = salt["defaults.deepcopy"](src)
    out["a"][1]["b"] = 3
    assert src == {"a": [1, {"b": 2}]}


def test_get_reads_the_formula_defaults(salt):
    assert salt["defaults.get"]("core:users:root") == {"uid": 0}
    assert salt["defaults.get"]("core") == {"a": 1, "users": {"root": {"uid": 0}}}
    assert salt["defaults.get"]("core:missing") == ""
    assert salt["defaults.get"]("core:missing", default=5) == 5
    assert salt["defaults.get"]("onlyjson:k:v") == [1, 2]
    assert salt["defaults.get"]("both:from") == "yaml"  # defaults.yaml is read first
    assert salt["defaults.get"]("empty") == {}
    assert salt["defaults.get"]("nope:x", "dflt") == "dflt"
    assert salt["defaults.get"]("nope") is None
    assert salt["defaults.get"]("../etc:x", "safe") == "safe"  # never outside the file roots


def test_get_of_a_broken_file_says_which(salt):
    from briny.common.exceptions import CommandExecutionError

    with pytest.raises(CommandExecutionError, match="salt://broken/defaults.yaml does not parse"):
        salt["defaults.get"]("broken:a")
