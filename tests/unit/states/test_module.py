"""module.run / module.wait / mod_watch: both syntaxes, as Salt 3007 reports them."""

from __future__ import annotations

from typing import Any

import pytest

from briny.common import loader


def _states(test: bool = False) -> Any:
    opts = {"test": test, "id": "t"}
    return loader.states(opts, loader.minion_mods(opts))


def test_legacy_form() -> None:
    st = _states()
    assert st["module.run"](name="test.echo", text="hi") == {
        "name": "test.echo",
        "changes": {"ret": "hi"},
        "comment": "Module function test.echo executed",
        "result": True,
    }
    ret = st["module.run"](name="test.false")
    assert (ret["result"], ret["changes"]) == (False, {"ret": False})
    ret = st["module.run"](name="test.arg", m_name="ignored", kwarg1="dropped")
    assert ret["changes"] == {"ret": {"args": [], "kwargs": {}}}
    ret = st["module.run"](name="test.arg", args=["a"], kwargs={"k": 1})
    assert ret["changes"] == {"ret": {"args": ["a"], "kwargs": {"k": 1}}}
    ret = st["module.run"](name="test.echo")
    assert ret == {
        "name": "test.echo",
        "changes": {},
        "result": False,
        "comment": "The following arguments are missing: text",
    }
    ret = st["module.run"](name="test.exception", message="boom")
    assert ret["comment"] == "Module function test.exception threw an exception. Exception: boom"
    assert st["module.run"](name="nosuch.fun")["comment"] == "Module function nosuch.fun is not available"
    assert st["module.run"](name="cmd.run_all", cmd="exit 3", python_shell=True)["result"] is False


def test_new_form() -> None:
    st = _states()
    ret = st["module.run"](
        name="b", **{"test.arg": ["x", {"y": "z"}], "test.echo": [{"text": "hello"}], "test.false": []}
    )
    assert ret["name"] == ["test.arg", "test.echo", "test.false"]
    assert ret["result"] is False
    assert ret["comment"] == "'test.false': False, test.arg: Success, test.echo: hello"
    assert ret["changes"] == {"test.arg": {"args": ["x"], "kwargs": {"y": "z"}}, "test.echo": "hello"}
    ret = st["module.run"](**{"test.echo": []})
    assert ret["comment"] == "'test.echo' failed: Missing arguments: text"
    ret = st["module.run"](**{"test.echo:1": ["a"]})
    assert (ret["result"], ret["changes"]) == (True, {"test.echo:1": "a"})
    ret = st["module.run"](**{"cmd.run_all": [{"cmd": "exit 3"}, {"python_shell": True}]})
    assert ret["comment"] == "'cmd.run_all' failed: (error message N/A)"
    ret = st["module.run"](**{"test.exception": [{"message": "boom"}]})
    assert (ret["result"], ret["comment"]) == (False, "'test.exception' failed: boom")


def test_test_mode_and_missing() -> None:
    st = _states(test=True)
    assert st["module.run"](name="test.echo", text="x") == {
        "name": "test.echo",
        "changes": {},
        "comment": "Module function test.echo is set to execute",
        "result": None,
    }
    ret = st["module.run"](**{"test.true": [], "test.echo": ["x"]})
    assert (ret["result"], ret["comment"]) == (None, "Functions test.true, test.echo to be executed.")
    ret = st["module.run"](**{"nosuch.fun": [], "test.true": [], "other.x": []})
    assert ret["result"] is False
    assert ret["comment"] == "Unavailable functions: nosuch.fun, other.x. Function test.true to be executed."


def test_wait_and_mod_watch() -> None:
    st = _states()
    assert st["module.wait"](name="test.echo", text="w") == {
        "name": "test.echo",
        "changes": {},
        "result": True,
        "comment": "",
    }
    ret = st["module.mod_watch"](name="test.echo", text="w", sfun="wait", __reqs__={})
    assert (ret["comment"], ret["changes"]) == ("Module function test.echo executed", {"ret": "w"})
    ret = st["module.mod_watch"](name="w2", sfun="wait", __reqs__={}, **{"test.echo": [{"text": "w2"}]})
    assert (ret["name"], ret["changes"]) == (["test.echo"], {"test.echo": "w2"})


@pytest.mark.parametrize(
    "value,ok",
    [
        (True, True),
        (False, False),
        ({"retcode": 0}, True),
        ({"retcode": 1}, False),
        ({"a": {"result": False}}, False),
        ("text", True),
        (None, True),
    ],
)
def test_result_from_return(value: Any, ok: bool) -> None:
    st = _states()
    mod = st.module("module")
    assert mod._succeeded(value) is ok


def test_a_returner_is_named_in_the_result_not_dropped_unseen() -> None:
    """briny has no returners: the call still runs (its return stays in the result), and the
    state's ``warnings`` (shown by the highstate output) say the returner was not called."""
    st = _states()
    why = "'returner' was ignored: returners are not supported by briny ('mysql' is not called)"
    legacy = st["module.run"](name="test.echo", text="hi", returner="mysql")
    assert (legacy["result"], legacy["changes"], legacy["warnings"]) == (True, {"ret": "hi"}, [why])
