"""The one nested lookup (``common/traverse.py``): every answer here is what Salt 3007's
``traverse_dict_and_list`` gives for the same data, key, default and delimiter (recorded with
the reference Salt)."""

from __future__ import annotations

import pytest

from briny.common.traverse import DEFAULT_DELIM, traverse

CASES = [
    # a dict inside a list: the first dict holding the key wins
    ({"a": [{"b": 1}]}, "a:b", None, ":", 1),
    ({"a": [{"x": 0}, {"b": 2}]}, "a:b", "D", ":", 2),
    ({"a": [{"b": 1}, {"b": 2}]}, "a:b", None, ":", 1),
    ({"a": [{"x": 0}]}, "a:b", "D", ":", "D"),
    ([{"a": 1}], "a", None, ":", 1),
    # numeric steps: an integer key of a dict in the list first, then the index
    ({"a": [10, 20, 30]}, "a:1", None, ":", 20),
    ({"a": [10, 20, 30]}, "a:-1", None, ":", 30),
    ({"a": [10, 20, 30]}, "a:5", "D", ":", "D"),
    ({"a": [{1: "one"}, "x"]}, "a:1", None, ":", "one"),
    ({"a": [{"1": "one"}, "x"]}, "a:1", None, ":", "x"),
    ({"a": [[1, 2], [3, 4]]}, "a:1:0", None, ":", 3),
    ([{"a": 1}], "0:a", None, ":", 1),
    ({"a": {"b": [1, {"c": "d"}]}}, "a:b:1:c", None, ":", "d"),
    # the delimiter argument
    ({"a": {"b": {"c": 3}}}, "a/b/c", None, "/", 3),
    ({"a": {"b": {"c": 3}}}, "a:b:c", "D", "/", "D"),
    ({"a": {"b:c": 1}}, "a:b:c", "D", ":", "D"),
    # a missing key read as YAML: integer, float, boolean, null keys
    ({1: "int-key"}, "1", None, ":", "int-key"),
    ({True: "t"}, "true", None, ":", "t"),
    ({1.5: "f"}, "1.5", None, ":", "f"),
    ({"a": {None: "n"}}, "a:null", "D", ":", "n"),
    ({"a": {"0": "zero"}}, "a:0", None, ":", "zero"),
    # steps into what holds no keys
    ({"a": "str"}, "a:0", "D", ":", "D"),
    ({"a": 5}, "a:b", "D", ":", "D"),
    ({"a": None}, "a:b", "D", ":", "D"),
    ({"a": ("t0", "t1")}, "a:0", "D", ":", "D"),
    # keys given as a list, empty steps
    ({"a": {"b": 1}}, ["a", "b"], None, ":", 1),
    ({"a": {"b": 1}}, "", "D", ":", "D"),
    ({"": {"b": 1}}, ":b", "D", ":", 1),
]


@pytest.mark.parametrize(("data", "key", "default", "delimiter", "expected"), CASES)
def test_traverse_as_salt(data, key, default, delimiter, expected):
    assert traverse(data, key, default, delimiter) == expected


def test_integer_key_and_default_delimiter():
    assert DEFAULT_DELIM == ":"
    assert traverse(["a", "b"], 1) == "b"
    assert traverse({"a": {"b": 2}}, "a:b") == 2
    assert traverse({"a": {"b": 2}}, "a:c") is None


def test_missing_key_that_yaml_cannot_read_gives_the_default():
    assert traverse({"a": 1}, "{unclosed", "D") == "D"
