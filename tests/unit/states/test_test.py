"""The test state module, live and under test=True, against Salt 3007's answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

CHANGED = {"testing": {"old": "Unchanged", "new": "Something pretended to change"}}


def _states(tmp_path: Path, test: bool = False, pillar: dict | None = None) -> Any:
    opts = {"test": test, "file_roots": {"base": [str(tmp_path)]}, "id": "t", "cachedir": str(tmp_path / "cache")}
    salt = loader.minion_mods(opts, pillar=pillar or {})
    return loader.states(opts, salt)


def _strip(ret: dict) -> tuple:
    return ret["result"], ret["comment"], ret["changes"]


@pytest.mark.parametrize(
    "fun,live,test",
    [
        (
            "succeed_with_changes",
            (True, "Success!", CHANGED),
            (None, "If we weren't testing, this would be successful with changes", CHANGED),
        ),
        ("succeed_without_changes", (True, "Success!", {}), (True, "Success!", {})),
        (
            "fail_with_changes",
            (False, "Failure!", CHANGED),
            (None, "If we weren't testing, this would be failed with changes", CHANGED),
        ),
        (
            "fail_without_changes",
            (False, "Failure!", {}),
            (False, "If we weren't testing, this would be a failure!", {}),
        ),
        ("nop", (True, "Success!", {}), (True, "Success!", {})),
    ],
)
def test_simple_states(tmp_path: Path, fun: str, live: tuple, test: tuple) -> None:
    ret = _states(tmp_path)[f"test.{fun}"](name="x")
    assert ret["name"] == "x"
    assert _strip(ret) == live
    assert _strip(_states(tmp_path, test=True)[f"test.{fun}"](name="x")) == test


def test_comment_overrides_live_comment(tmp_path: Path) -> None:
    st = _states(tmp_path)
    assert st["test.succeed_with_changes"](name="x", comment="c")["comment"] == "c"
    assert st["test.fail_without_changes"](name="x", comment="c")["comment"] == "c"
    assert st["test.nop"](name="x", comment="c")["comment"] == "Success!"
    tst = _states(tmp_path, test=True)
    assert tst["test.succeed_without_changes"](name="x", comment="c")["comment"] == "c"
    assert tst["test.fail_with_changes"](name="x", comment="c")["comment"].startswith("If we weren't")


def test_configurable_live(tmp_path: Path) -> None:
    st = _states(tmp_path)
    fun = st["test.configurable_test_state"]
    assert _strip(fun(name="f", changes=True, result=True, comment="hello")) == (True, "hello", CHANGED)
    assert _strip(fun(name="e", changes=False, result=True)) == (True, "", {})
    assert _strip(fun(name="f", changes=True, result=False)) == (False, "", CHANGED)
    ret = fun(name="h", changes=False, result=False, warnings=["w1"])
    assert ret["warnings"] == ["w1"] and ret["result"] is False
    assert fun(name="q", warnings="w2")["warnings"] == ["w2"]
    assert fun(name="l", changes=False, comment=["a", "b"])["comment"] == "a\nb"
    rnd = fun(name="r", changes="random", result="Random")
    assert rnd["result"] in (True, False) and rnd["changes"] in ({}, CHANGED)


def test_configurable_test_mode(tmp_path: Path) -> None:
    fun = _states(tmp_path, test=True)["test.configurable_test_state"]
    assert _strip(fun(name="f", comment="hello")) == (None, "hello", CHANGED)
    assert _strip(fun(name="e", changes=False, result=True)) == (True, "This is a test", {})
    assert _strip(fun(name="h", changes=False, result=False)) == (True, "This is a test", {})
    assert _strip(fun(name="f", changes=True, result=False)) == (None, "This is a test", CHANGED)
    assert _strip(fun(name="i", result=False, allow_test_mode_failure=True)) == (False, "This is a test", CHANGED)
    assert fun(name="g", changes="Random", result="Random")["result"] in (None, True)


@pytest.mark.parametrize("option", ["changes", "result"])
def test_configurable_bad_option_fails_cleanly(tmp_path: Path, option: str) -> None:
    ret = _states(tmp_path)["test.configurable_test_state"](name="m", **{option: "bogus"})
    assert ret["result"] is False and ret["changes"] == {}
    assert ret["comment"] == (
        f"You have specified the state option '{option}' with invalid arguments. "
        "It must be either True, False, or 'Random'"
    )


def test_show_notification(tmp_path: Path) -> None:
    for test in (False, True):
        fun = _states(tmp_path, test=test)["test.show_notification"]
        assert _strip(fun(name="j", text="note here")) == (True, "note here", {})
    ret = _states(tmp_path)["test.show_notification"](name="d")
    assert ret["result"] is False and ret["comment"] == "Missing required argument text."


def test_no_comment_variants_in_3007(tmp_path: Path) -> None:
    st = _states(tmp_path)
    assert "test.succeed_with_comment" not in st
    assert "test.fail_with_comment" not in st


def test_mod_watch(tmp_path: Path) -> None:
    def low(id_: str) -> dict:
        return {"state": "test", "__id__": id_, "name": id_, "fun": "succeed_with_changes"}

    reqs = {"watch": [low("h"), low("quiet")], "watch_any": [low("any")], "require": []}
    states = _states(tmp_path)
    states["test.nop"]  # load the module, then give it the run's results as the engine does
    states.module("test").__running__ = {
        "test_|-h_|-h_|-succeed_with_changes": {"changes": {"x": 1}},
        "test_|-quiet_|-quiet_|-succeed_with_changes": {"changes": {}},
        "test_|-any_|-any_|-succeed_with_changes": {"changes": {"x": 1}},
    }
    ret = states["test.mod_watch"](name="s", sfun="nop", __reqs__=reqs)
    # only plain watch targets that changed, as Salt lists them (never watch_any)
    assert ret == {
        "name": "s",
        "result": True,
        "comment": "Watch statement fired.",
        "changes": {"Requisites with changes": ["test: h"]},
    }
    ret = _states(tmp_path)["test.mod_watch"](name="c", sfun="configurable_test_state", changes=False, __reqs__=reqs)
    assert _strip(ret) == (True, "", {})


def test_check_pillar(tmp_path: Path) -> None:
    st = _states(tmp_path, pillar={"a": {"b": 1}, "s": "x"})
    ret = st["test.check_pillar"](name="k", present=["foo"])
    assert _strip(ret) == (False, 'Pillar key "foo" is missing.\n', {})
    assert st["test.check_pillar"](name="k", present=["a:b"], string=["s"])["result"] is True
    assert st["test.check_pillar"](name="k", integer="s")["result"] is False
    ret = st["test.check_pillar"](name="k", present=["s"], string=["s"], verbose=True)
    assert _strip(ret) == (True, "Those keys passed the check:\n- s ((<class 'str'>,))\n", {})
    ret = st["test.check_pillar"](name="k", integer=["s"], dictionary=["d"])
    assert _strip(ret) == (False, 'Pillar key "s" is not <class \'int\'>.\nPillar key "d" is missing.\n', {})
    # Salt's pillar.get lookup: a dict inside a list, and a key set to None counts as missing
    st = _states(tmp_path, pillar={"l": [{"x": 1}], "n": None})
    assert st["test.check_pillar"](name="k", integer=["l:x"])["result"] is True
    ret = st["test.check_pillar"](name="k", present=["n"])
    assert _strip(ret) == (False, 'Pillar key "n" is missing.\n', {})
