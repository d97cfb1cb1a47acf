"""``slsutil`` merge strategies, against Salt 3007.17's answers."""

from __future__ import annotations

import pytest

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

A = {"a": {"b": 1, "l": [1]}}
B = {"a": {"c": 2, "l": [2]}}


@pytest.mark.parametrize(
    "a,b,kwargs,expected",
    [
        (A, B, {}, {"a": {"b": 1, "l": [2], "c": 2}}),
        (A, B, {"merge_lists": True}, {"a": {"b": 1, "l": [1, 2], "c": 2}}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "overwrite"}, {"a": {"c": 2}}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "list"}, {"a": [{"b": 1}, {"c": 2}]}),
        ({"a": [1]}, {"a": [2]}, {"strategy": "list"}, {"a": [[1], [2]]}),
        ({"a": 1, "x": 5}, {"b": 2, "x": 6}, {"strategy": "list"}, {"a": 1, "x": [5, 6]}),
        ({"a": [1]}, {"a": [2]}, {"strategy": "aggregate"}, {"a": [2]}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "aggregate"}, {"a": {"c": 2}}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "smart"}, {"a": {"b": 1, "c": 2}}),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, {"strategy": "bogus"}, {"a": {"b": 1, "c": 2}}),
        ({"a": 1}, {"a": {"c": 2}}, {"strategy": "recurse"}, {"a": {"c": 2}}),
        ({"a": {"b": 1}}, {"a": 3}, {"strategy": "recurse"}, {"a": 3}),
        ({"a": [1, 2]}, {"a": [2, 3]}, {"merge_lists": True}, {"a": [1, 2, 3]}),
        ({"a": [1]}, {"a": 5}, {"merge_lists": True}, {"a": 5}),
        ({"a": [1]}, {"a": [2]}, {"strategy": "overwrite", "merge_lists": True}, {"a": [2]}),
    ],
)
def test_merge(loader, a, b, kwargs, expected):
    assert loader["slsutil.merge"](a, b, **kwargs) == expected


def test_merge_does_not_mutate(loader):
    a = {"a": {"b": 1}}
    loader["slsutil.merge"](a, {"a": {"c": 2}})
    assert a == {"a": {"b": 1}}


def test_merge_bad_types(loader):
    with pytest.raises(SaltInvocationError, match="non-dict"):
        loader["slsutil.merge"]([1], {"a": 2})
    with pytest.raises(SaltInvocationError):
        loader["slsutil.update"]({"a": 1}, "x")
    with pytest.raises(SaltInvocationError):
        loader["slsutil.merge_all"]({"a": 1})


def test_update_and_merge_all(loader):
    assert loader["slsutil.update"](A, B, merge_lists=True) == {"a": {"b": 1, "l": [1, 2], "c": 2}}
    assert loader["slsutil.update"]({"a": {"x": 1}}, {"a": {"y": 2}}, recursive_update=False) == {"a": {"y": 2}}
    assert loader["slsutil.merge_all"]([{"a": 1}, {"b": 2}, {"a": 3}]) == {"a": 3, "b": 2}
    assert loader["slsutil.merge_all"]([{"a": [1]}, {"a": [2]}], merge_lists=True) == {"a": [1, 2]}


def test_boolstr(loader):
    assert loader["slsutil.boolstr"](True) == "true"
    assert loader["slsutil.boolstr"](False) == "false"
    assert loader["slsutil.boolstr"](0, true="yes", false="no") == "no"


def test_file_server_checks_need_cp(tmp_path):
    from briny.common.loader import minion_mods

    salt = minion_mods({"id": "x"}, {}, {})
    salt._funcs["cp"] = {}  # a host where cp offers nothing
    with pytest.raises(CommandExecutionError, match="cp.list_master"):
        salt["slsutil.file_exists"]("sub/file.txt")


def test_file_server_checks_with_local_roots(tmp_path):
    from briny.common.loader import minion_mods

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "file.txt").write_text("hi\n")
    salt = minion_mods({"id": "x", "file_client": "local", "file_roots": {"base": [str(tmp_path)]}}, {}, {})
    assert salt["slsutil.file_exists"]("sub/file.txt") is True
    assert salt["slsutil.file_exists"]("sub") is False
    assert salt["slsutil.dir_exists"]("sub") is True


def test_file_server_checks_with_fake_cp(tmp_path):
    from briny.common.loader import minion_mods

    (tmp_path / "cp.py").write_text(
        "def list_master(saltenv='base', **kw):\n    return ['sub/file.txt', 'top.sls']\n"
        "def list_master_dirs(saltenv='base', **kw):\n    return ['sub']\n"
    )
    salt = minion_mods({"id": "x"}, {}, {}, extra_dirs=[tmp_path])
    assert salt["slsutil.file_exists"]("sub/file.txt") is True
    assert salt["slsutil.file_exists"]("salt://sub/file.txt") is True
    assert salt["slsutil.file_exists"]("sub") is False
    assert salt["slsutil.dir_exists"]("sub") is True
    assert salt["slsutil.path_exists"]("sub") is True
    assert salt["slsutil.path_exists"]("nope") is False
    assert salt["slsutil.findup"]("sub/file.txt", "file.txt") == "sub/file.txt"
    assert salt["slsutil.findup"]("sub", "top.sls") == "top.sls"
    assert salt["slsutil.findup"]("sub", "nope.sls") is None
