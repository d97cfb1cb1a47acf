"""One state call (``common/state/state_call.py``): the check commands go through ``cmd.retcode`` with
Salt's options, ``get_return`` is Salt's nested lookup, a state that raises is logged at error."""

from __future__ import annotations

import logging
import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader
from briny.common.state.engine import run_low_chunks
from briny.common.state.runcontext import RunContext

# A cmd module that records how it was called and answers from a table, and a state module
CMD = """
CALLS = []
ANSWERS = {}

def retcode(cmd, **kwargs):
    CALLS.append((cmd, kwargs))
    return ANSWERS.get(cmd, 0)

def info(**kwargs):
    return {"a": [{"ready": True}, {"other": 1}], "n": [0, "yes"]}
"""
STATES = """
def ok(name, **kwargs):
    return {"name": name, "changes": {}, "result": True, "comment": "ran"}

def boom(name, **kwargs):
    raise ValueError("kaboom in the state")

def strict(name, path, mode=None):
    return {"name": name, "changes": {}, "result": True, "comment": f"strict {path} {mode}"}

def shaped(name, ret=None, **kwargs):
    return ret

def external(name, subs=(), **kwargs):
    return {"name": name, "changes": {}, "result": True, "comment": "outer", "sub_state_run": list(subs)}
"""


@pytest.fixture()
def loaders(tmp_path: Path):
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "cmd.py").write_text(textwrap.dedent(CMD))
    (tmp_path / "states").mkdir()
    (tmp_path / "states" / "probe.py").write_text(textwrap.dedent(STATES))
    opts = {"test": False, "id": "m1"}
    salt = loader.minion_mods(opts, extra_dirs=[tmp_path / "mods"])
    states = loader.states(opts, salt, extra_dirs=[tmp_path / "states"])
    return opts, salt, states


def _low(fun: str = "ok", **kw: Any) -> dict[str, Any]:
    return {"state": "probe", "fun": fun, "__id__": "x", "name": "x", "__sls__": "s", "__env__": "base", **kw}


def _run(loaders, low: dict[str, Any]) -> tuple[dict[str, Any], list]:
    opts, salt, states = loaders
    ret = run_low_chunks([low], RunContext.from_opts(opts, salt, states, jid="20240101000000000000"))
    return next(iter(ret.values())), salt.module("cmd").CALLS


def test_onlyif_and_unless_run_through_cmd_with_the_states_options(loaders):
    low = _low(
        onlyif="true-cmd",
        unless="false-cmd",
        runas="nobody",
        cwd="/tmp",
        env={"A": "1"},
        shell="/bin/bash",
        umask="022",
        timeout=5,
    )
    loaders[1].module("cmd").ANSWERS.update({"false-cmd": 1})
    ret, calls = _run(loaders, low)
    assert ret["result"] is True and ret["comment"] == "ran"
    expected = {
        "ignore_retcode": True,
        "python_shell": True,
        "runas": "nobody",
        "cwd": "/tmp",
        "env": {"A": "1"},
        "shell": "/bin/bash",
        "umask": "022",
        "timeout": 5,
    }
    assert calls == [("true-cmd", expected), ("false-cmd", expected)]


def test_cmd_opts_exclude_drops_options(loaders):
    ret, calls = _run(loaders, _low(onlyif="c", runas="nobody", cwd="/tmp", cmd_opts_exclude="runas"))
    assert ret["result"] is True
    assert calls == [("c", {"ignore_retcode": True, "python_shell": True, "cwd": "/tmp"})]
    loaders[1].module("cmd").CALLS.clear()
    _run(loaders, _low(onlyif="c", runas="nobody", shell="/bin/zsh", cmd_opts_exclude=["runas", "shell"]))
    assert calls == [("c", {"ignore_retcode": True, "python_shell": True})]


def test_check_cmd_gets_no_runas_env_or_cwd(loaders):
    """Salt's _run_check_cmd passes only the shell grain (cmd's own default here)."""
    ret, calls = _run(loaders, _low(check_cmd="verify", runas="nobody", cwd="/tmp", env={"A": "1"}))
    assert ret["comment"] == "check_cmd determined the state succeeded"
    assert calls == [("verify", {"ignore_retcode": True, "python_shell": True})]
    loaders[1].module("cmd").ANSWERS.update({"verify": 3})
    ret, _ = _run(loaders, _low(check_cmd="verify"))
    assert (ret["result"], ret["comment"]) == (False, "check_cmd determined the state failed")


def test_onlyif_false_skips_the_state(loaders):
    loaders[1].module("cmd").ANSWERS.update({"no": 1})
    ret, _ = _run(loaders, _low(onlyif="no"))
    assert (ret["result"], ret["comment"]) == (True, "onlyif condition is false")


@pytest.mark.parametrize(
    ("get_return", "result", "comment"),
    [
        ("a:ready", True, "ran"),  # a dict inside a list, as Salt's traverse_dict_and_list
        ("n:1", True, "ran"),
        ("n:0", True, "onlyif condition is false"),
        ("a:missing", True, "onlyif condition is false"),
    ],
)
def test_onlyif_get_return_is_salts_nested_lookup(loaders, get_return, result, comment):
    ret, _ = _run(loaders, _low(onlyif=[{"fun": "cmd.info", "get_return": get_return}]))
    assert (ret["result"], ret["comment"]) == (result, comment)


def test_a_state_that_raises_is_logged_at_error_with_its_traceback(loaders, caplog):
    with caplog.at_level(logging.WARNING, logger="briny.common.state.state_call"):
        ret, _ = _run(loaders, _low(fun="boom"))
    assert ret["result"] is False
    assert ret["comment"].startswith("An exception occurred in this state: Traceback")
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "Traceback" in errors[0].getMessage() and "kaboom in the state" in errors[0].getMessage()


def test_a_successful_state_logs_nothing_above_info(loaders, caplog):
    with caplog.at_level(logging.WARNING, logger="briny.common.state.state_call"):
        ret, _ = _run(loaders, _low())
    assert ret["result"] is True
    assert caplog.records == []


def test_a_keyword_a_function_without_kwargs_does_not_take_fails_that_state_in_salts_words(loaders, caplog):
    """Salt 3007 aborts the whole run with this message; briny fails the one state, and the
    state system's own keys (requisites, onlyif, order, __sls__ ...) are never counted."""
    ret, _ = _run(loaders, _low(fun="strict", path="/p", mode=1, order=3, require=[], onlyif="true"))
    assert (ret["result"], ret["comment"]) == (True, "strict /p 1")
    with caplog.at_level(logging.ERROR, logger="briny.common.state.state_call"):
        ret, _ = _run(loaders, _low(fun="strict", path="/p", foo=1))
    assert (ret["result"], ret["changes"]) == (False, {})
    assert ret["comment"] == "'foo' is an invalid keyword argument for 'probe.strict'"
    assert "'foo' is an invalid keyword argument" in caplog.text
    ret, _ = _run(loaders, _low(fun="strict", path="/p", foo=1, bar=2, __baz=3))
    assert ret["comment"] == "'foo', 'bar' and '__baz' are invalid keyword arguments for 'probe.strict'"


def test_a_missing_parameter_fails_the_state_unrun_as_salts_verify_data(loaders):
    ret, _ = _run(loaders, _low(fun="strict"))
    assert ret == {
        "result": False,
        "name": "x",
        "changes": {},
        "comment": "Missing parameter path for state probe.strict\n",
        "__run_num__": 0,
    }


def test_a_name_that_is_not_a_string_fails_the_state_unrun(loaders):
    ret, _ = _run(loaders, _low(name=5))
    assert ret["result"] is False
    assert ret["comment"] == "ID '5' in SLS 's' is not formed as a string, but is a int\n"


@pytest.mark.parametrize(
    ("ret", "comment"),
    [
        (
            {"name": "x", "changes": {}, "result": True},
            "The following keys were not present in the state return: comment.",
        ),
        ({"changes": {}}, "The following keys were not present in the state return: name, result, comment."),
        ({"name": "x", "changes": [], "result": True, "comment": ""}, "'Changes' should be a dictionary."),
        ("done", "Malformed state return. Data must be a dictionary type."),
    ],
)
def test_a_malformed_return_fails_the_state_as_salts_check_does(loaders, ret, comment):
    got, _ = _run(loaders, _low(fun="shaped", ret=ret))
    assert (got["result"], got["changes"]) == (False, {})
    assert got["comment"] == f"An exception occurred in this state: {comment}"
    assert got["__run_num__"] == 0 and got["__id__"] == "x"


def test_a_return_is_evened_out_as_salt_does(loaders):
    got, _ = _run(loaders, _low(fun="shaped", ret={"name": "x", "changes": {}, "result": 1, "comment": ["a", "b"]}))
    assert (got["result"], got["comment"]) == (True, "a\nb")


def _sub(n, **extra):
    return {
        "changes": {"n": n},
        "result": True,
        "comment": f"sub {n}",
        **extra,
        "low": {"name": f"s{n}", "state": "ext", "__id__": f"id{n}", "fun": "apply"},
    }


def test_each_sub_state_run_entry_is_a_state_of_its_own(loaders):
    """As Salt 3007 shows them, the documented form without a top-level name included (Salt
    then fails with a KeyError; briny names it from its low); numbered in order."""
    opts, salt, states = loaders
    subs = [_sub(0), _sub(1, name="top", duration=5, start_time="01:02:03.000004"), {"result": True, "low": {}}]
    chunks = [_low(fun="external", subs=subs), _low(__id__="y", name="y")]
    ret = run_low_chunks(chunks, RunContext.from_opts(opts, salt, states, jid="20240101000000000000"))
    assert list(ret) == [
        "probe_|-x_|-x_|-external",
        "ext_|-id0_|-s0_|-apply",
        "ext_|-id1_|-s1_|-apply",
        "probe_|-y_|-y_|-ok",
    ]
    parent = ret["probe_|-x_|-x_|-external"]
    assert "sub_state_run" not in parent and parent["result"] is False
    assert parent["comment"] == "outer\nsub_state_run entry 2 has no low data with state, __id__, name and fun"
    first = ret["ext_|-id0_|-s0_|-apply"]
    assert list(first) == [
        "name",
        "changes",
        "result",
        "duration",
        "start_time",
        "comment",
        "__state_ran__",
        "__run_num__",
        "__sls__",
        "__id__",
    ]
    assert (first["name"], first["__id__"], first["__sls__"]) == ("x", "x", "s")  # the parent's, as Salt
    assert (first["changes"], first["result"], first["comment"]) == ({"n": 0}, True, "sub 0")
    second = ret["ext_|-id1_|-s1_|-apply"]
    assert (second["duration"], second["start_time"]) == (5, "01:02:03.000004")
    assert [r["__run_num__"] for r in ret.values()] == [0, 1, 2, 3]


def test_a_sub_state_run_entry_missing_its_result_fails_on_its_own(loaders):
    entry = _sub(0)
    del entry["result"]
    got = run_low_chunks([_low(fun="external", subs=[entry])], RunContext.from_opts(*loaders))
    sub = got["ext_|-id0_|-s0_|-apply"]
    assert sub["result"] is False
    assert (
        sub["comment"]
        == "An exception occurred in this state: The following keys were not present in the state return: result."
    )
