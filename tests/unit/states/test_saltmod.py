"""The ``salt`` state module (orchestration steps): Salt 3007's results for what the master answers.

The master side is replaced by recorded answers given through the orchestration's own
``__salt__`` (:class:`briny.master.orchestrate.OrchestrationFunctions`), so each rule of
``salt.state`` / ``salt.function`` / ``salt.runner`` / ``salt.wheel`` / ``salt.wait_for_event``
is checked on its own; ``tests/e2e/test_orchestrate.py`` runs them against real daemons.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from briny.common import loader
from briny.common.state.engine import run_low_chunks
from briny.common.state.runcontext import RunContext
from briny.master.orchestrate import OrchestrationFunctions

OK_STATE = {"test_|-a_|-a_|-nop": {"result": True, "changes": {}, "comment": "", "name": "a", "__run_num__": 0}}
CHANGED = {"test_|-a_|-a_|-nop": {"result": True, "changes": {"x": 1}, "comment": "", "name": "a", "__run_num__": 0}}
FAILED = {"test_|-a_|-a_|-nop": {"result": False, "changes": {}, "comment": "", "name": "a", "__run_num__": 0}}


class Master:
    """Recorded answers of the master-side functions, and the calls made to them."""

    def __init__(self, returns: dict[str, dict[str, Any]] | None = None) -> None:
        self.returns = returns or {}
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.runner_answer: dict[str, Any] = {"return": ["db1"], "success": True}

    def cmd(self, *args: Any, **kwargs: Any) -> dict[str, dict[str, Any]]:
        self.calls.append(("cmd", args, kwargs))
        return self.returns

    def runner(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("runner", args, kwargs))
        return self.runner_answer

    def listen(self, tag: str, timeout: float) -> Iterator[tuple[str, dict[str, Any]]]:
        self.calls.append(("listen", (tag, timeout), {}))
        yield from self.events

    def functions(self) -> dict[str, Callable[..., Any]]:
        return {
            "saltutil.cmd": self.cmd,
            "saltutil.runner": self.runner,
            "saltutil.wheel": self.runner,
            "event.listen": self.listen,
        }


def _states(master: Master, test: bool = False) -> Any:
    opts = {"test": test, "id": "m_master", "file_client": "local"}
    salt = OrchestrationFunctions(loader.minion_mods(opts, extra_dirs=[]), master.functions())
    return loader.states(opts, salt, extra_dirs=[])


def _mine(ret: Any, retcode: int = 0) -> dict[str, Any]:
    return {"ret": ret, "retcode": retcode, "jid": "20260101000000000001", "out": "highstate"}


def test_state_publishes_sls_with_the_salt_arguments() -> None:
    master = Master({"db1": _mine(CHANGED), "db2": _mine(OK_STATE)})
    ret = _states(master)["salt.state"](
        name="db", tgt="db*", sls=["a", "b"], pillar={"k": 1}, failhard=True, saltenv="dev"
    )
    assert master.calls == [
        (
            "cmd",
            ("db*", "state.sls"),
            {
                "arg": ["a,b"],
                "kwarg": {"pillar": {"k": 1}, "saltenv": "dev", "queue": False, "concurrent": False, "failhard": True},
                "tgt_type": "glob",
                "timeout": None,
                "expect_minions": True,
            },
        )
    ]
    assert ret == {
        "name": "db",
        "changes": {"out": "highstate", "ret": {"db1": CHANGED}},
        "comment": "States ran successfully. Updating db1. No changes made to db2.",
        "result": True,
        "__jid__": "20260101000000000001",
    }


def test_state_failures_fail_minions_and_allow_fail() -> None:
    master = Master({"w1": _mine(FAILED, 2), "w2": _mine(["Rendering SLS 'base:x' failed"], 1)})
    st = _states(master)
    ret = st["salt.state"](name="w", tgt="w*", highstate=True)
    assert master.calls[0][1] == ("w*", "state.highstate")
    assert ret["result"] is False
    assert ret["comment"] == ("Run failed on minions: w1, w2\nMinion w2 returned errors: Rendering SLS 'base:x' failed")
    assert ret["changes"]["ret"] == {"w1": FAILED, "w2": ["Rendering SLS 'base:x' failed"]}
    forgiven = st["salt.state"](name="w", tgt="w*", sls="x", fail_minions="w1, w2")
    assert (forgiven["result"], forgiven["comment"]) == (True, "States ran successfully. Updating w1, w2.")
    allowed = st["salt.state"](name="w", tgt="w*", sls="x", allow_fail=2)
    assert allowed["result"] is True
    bad = st["salt.state"](name="w", tgt="w*", sls="x", fail_minions=3)
    assert bad["warnings"] == ["'fail_minions' needs to be a list or a comma separated string. Ignored."]


def test_state_refusals() -> None:
    st = _states(Master({}))
    assert st["salt.state"](name="n", tgt="none*", sls="x") == {
        "name": "n",
        "changes": {},
        "comment": "No minions returned",
        "result": False,
    }
    assert st["salt.state"](name="n", tgt="*")["comment"] == "No highstate or sls specified, no execution made"
    assert st["salt.state"](name="n", tgt="*", sls="x", concurrent="yes")["comment"] == (
        "Must pass in boolean for value of 'concurrent'"
    )
    assert st["salt.state"](name="n", tgt="*", sls="x", allow_fail="x")["comment"] == (
        "Passed invalid value for 'allow_fail', must be an int"
    )
    ssh = st["salt.state"](name="n", tgt="*", sls="x", ssh=True)
    assert ssh["result"] is False and "salt-ssh is not supported" in ssh["comment"]
    quiet = st["salt.state"](name="n", tgt="none*", sls="x", expect_minions=False, batch=2, ret="mysql")
    assert quiet["result"] is True
    assert [w.split(":")[0] for w in quiet["warnings"]] == ["'ret' was ignored", "'batch' was ignored"]


def test_state_missing_minion_and_test_mode() -> None:
    master = Master({"db1": _mine(CHANGED), "web9": {"failed": True}})
    ret = _states(master, test=True)["salt.state"](name="d", tgt=["db1", "web9"], tgt_type="list", sls="x")
    assert master.calls[0][2]["kwarg"]["test"] is True
    assert ret["result"] is False
    assert ret["comment"] == "Run failed on minions: web9\nMinion web9 did not return a state result."
    assert ret["changes"]["ret"]["web9"] is False
    master = Master({"db1": _mine(CHANGED)})
    assert _states(master, test=True)["salt.state"](name="d", tgt="db1", sls="x")["result"] is None


def test_function() -> None:
    master = Master({"a": _mine("up"), "b": _mine("oops", 1), "c": _mine(False)})
    st = _states(master)
    ret = st["salt.function"](name="cmd.run", tgt="*", arg="echo up", fail_minions=["c"])
    assert master.calls[0] == (
        "cmd",
        ("*", "cmd.run"),
        {"arg": ["echo", "up"], "kwarg": {}, "tgt_type": "glob", "timeout": None, "expect_minions": False},
    )
    assert ret == {
        "name": "cmd.run",
        "changes": {"ret": {"a": "up", "b": "oops", "c": False}},
        "comment": "Running function cmd.run failed on minions: b Function cmd.run ran on a, b, c.",
        "result": False,
        "warnings": ["Please specify 'arg' as a list of arguments."],
        "__jid__": "20260101000000000001",
    }
    fine = _states(Master({"a": _mine("up")}))["salt.function"](name="test.echo", tgt="a", arg=["up"])
    assert (fine["result"], fine["comment"]) == (True, "Function ran successfully. Function test.echo ran on a.")
    none = _states(Master({}))["salt.function"](name="test.ping", tgt="zz")
    assert (none["result"], none["comment"]) == (False, "No minions responded")
    dry = _states(Master(), test=True)["salt.function"](name="test.ping", tgt="db*")
    assert dry == {
        "name": "test.ping",
        "changes": {},
        "comment": "Function test.ping would be executed on target db*",
        "result": None,
    }


def test_runner_and_wheel() -> None:
    master = Master()
    st = _states(master)
    ret = st["salt.runner"](name="manage.up", timeout=3)
    assert master.calls == [("runner", ("manage.up",), {"timeout": 3, "full_return": True})]
    assert ret == {
        "name": "manage.up",
        "changes": {"return": ["db1"]},
        "result": True,
        "comment": "Runner function 'manage.up' executed.",
    }
    # an orchestration's whole answer: the state results are the step's return
    master.runner_answer = {"return": {"data": {"m": {"x": 1}}, "outputter": "highstate"}, "success": True}
    assert st["salt.runner"](name="state.orchestrate", mods="o")["changes"] == {"return": {"m": {"x": 1}}}
    master.runner_answer = {"return": {"Error": "no such key"}, "success": True}
    bad = st["salt.wheel"](name="key.accept", match="x")
    assert (bad["result"], bad["comment"]) == (False, "Wheel function 'key.accept' failed.")
    dry = _states(Master(), test=True)["salt.wheel"](name="key.accept", match="x")
    assert dry == {
        "name": "key.accept",
        "result": None,
        "changes": {},
        "comment": "Wheel function 'key.accept' would be executed.",
    }


@pytest.mark.parametrize(
    ("events", "result", "seen"),
    [
        ([("a/1", {"id": "db1"}), ("a/2", {"data": {"id": "web1"}})], True, ["db1", "web1"]),
        ([("a/1", {"id": ["web1", "db1", "other"]})], True, ["db1", "web1"]),
        ([("a/1", {"id": "db1"}), ("a/1", {"id": "nobody"}), ("a/3", {"name": "web1"})], False, ["db1"]),
    ],
)
def test_wait_for_event(events: list[tuple[str, dict[str, Any]]], result: bool, seen: list[str]) -> None:
    master = Master()
    master.events = events
    ret = _states(master)["salt.wait_for_event"](name="a/*", id_list=["db1", "web1"], timeout=7)
    assert master.calls == [("listen", ("a/*", 7.0), {})]
    assert ret["result"] is result
    assert sorted(ret["changes"].get("minions_seen", [])) == seen
    if result:
        assert ret["comment"].startswith("All events seen in ") and ret["comment"].endswith(" seconds.")
    else:
        assert ret["comment"] == "Timeout value reached."
    dry = _states(Master(), test=True)["salt.wait_for_event"](name="a/*", id_list=["x"])
    assert (dry["result"], dry["comment"]) == (None, "Orchestration would wait for event 'a/*'")


class ByName(Master):
    """Each runner's whole answer by its name (``full_return``), or the error it raises."""

    def __init__(self, answers: dict[str, Any]) -> None:
        super().__init__()
        self.answers = answers

    def runner(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("runner", args, kwargs))
        answer = self.answers[args[0]]
        if isinstance(answer, Exception):
            raise answer
        return {"return": answer, "success": True}


def _orch_answer(changes: dict[str, Any]) -> dict[str, Any]:
    state = {"salt_|-x_|-x_|-function": {"result": True, "changes": changes, "comment": "", "name": "x"}}
    return {"data": {"m_master": state}, "outputter": "highstate", "retcode": 0}


def test_parallel_runners_run_each_runner_and_merge_orchestrations_changes() -> None:
    master = ByName({"state.orchestrate": _orch_answer({"ret": {"db1": "hi"}, "out": "highstate"})})
    runners = {
        "one": [{"name": "state.orchestrate"}, {"kwarg": {"mods": "orch.a"}}],
        "two": [{"name": "state.orchestrate"}, {"kwarg": {"mods": "orch.b"}}],
    }
    ret = _states(master)["salt.parallel_runners"](name="both", runners=runners)
    assert ret == {
        "name": "both",
        "result": True,
        "comment": "All runner functions executed successfully.",
        "changes": {
            "one": {"m_master": {"salt_|-x_|-x_|-function": {"db1": "hi"}}},
            "two": {"m_master": {"salt_|-x_|-x_|-function": {"db1": "hi"}}},
        },
    }
    assert sorted(c[2]["mods"] for c in master.calls) == ["orch.a", "orch.b"]
    assert all(c[2]["full_return"] is True for c in master.calls)


def test_parallel_runners_other_runners_their_failures_and_bad_input() -> None:
    master = ByName({"jobs.active": {"exit_code": 1}, "manage.up": ["db1"], "test.arg": RuntimeError("boom")})
    states = _states(master)
    ret = states["salt.parallel_runners"](name="p", runners={"jobs.active": None, "up": [{"name": "manage.up"}]})
    assert ret == {
        "name": "p",
        "result": False,
        "comment": "Runner jobs.active failed.",
        "changes": {"ret": {"jobs.active": {"exit_code": 1}, "up": ["db1"]}},
    }
    single = states["salt.parallel_runners"](name="s", runners="manage.up")
    assert single["result"] is True and single["changes"] == {"ret": {"manage.up": ["db1"]}}
    raised = states["salt.parallel_runners"](name="r", runners={"t": [{"name": "test.arg"}], "u": "manage.up"})
    assert raised["result"] is False and raised["comment"] == "One of the runners raised an exception: boom"
    bad = states["salt.parallel_runners"](name="b", runners=["manage.up"])
    assert bad == {
        "name": "b",
        "result": False,
        "changes": {},
        "comment": "The runners parameter must be a string or dict.",
    }
    dry = _states(master, test=True)["salt.parallel_runners"](name="d", runners="manage.up")
    assert dry["result"] is None and dry["comment"] == "Runner functions manage.up would be executed."


def test_parallel_runners_run_at_the_same_time() -> None:
    import threading

    both = threading.Barrier(2, timeout=10)  # each runner waits for the other: only threads at once pass

    class Meeting(Master):
        def runner(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            both.wait()
            return {"return": args[0], "success": True}

    ret = _states(Meeting())["salt.parallel_runners"](name="p", runners={"a": None, "b": None})
    assert ret["result"] is True and ret["changes"] == {"ret": {"a": "a", "b": "b"}}


def test_a_parallel_step_reaches_the_master_functions() -> None:
    """A ``parallel: True`` step runs in a thread with loaders of its own
    (``common/state/runcontext.py``): they keep the orchestration's master functions."""
    master = Master({"a": _mine("up")})
    states = _states(master)
    step = {"state": "salt", "fun": "function", "__id__": "p", "name": "test.echo", "tgt": "a", "arg": ["up"]}
    step.update({"__sls__": "o", "__env__": "base", "order": 1, "parallel": True})
    ctx = RunContext.from_opts(states.opts, states.pack["__salt__"], states, jid="20260101000000000009")
    [ret] = run_low_chunks([step], ctx).values()
    assert (ret["result"], ret["__parallel__"]) == (True, True), ret
    assert ret["changes"] == {"ret": {"a": "up"}} and master.calls[0][1] == ("a", "test.echo")
