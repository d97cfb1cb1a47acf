"""The requisite engine's behaviours beyond the Salt golden cases, and a fuzz test."""

from __future__ import annotations

import fnmatch
import random
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader
from briny.common.exceptions import LoaderError
from briny.common.state.engine import Engine, run_low_chunks
from briny.common.state.runcontext import RunContext

FAKES = Path(__file__).parent / "engine_cases" / "fakes"

PROBE = """
CALLS = []

def mod_init(low):
    CALLS.append(("mod_init", low["__id__"]))
    return True

def ok(name, **kwargs):
    CALLS.append(("ok", name, __opts__["test"], __low__["__id__"], __env__))
    if __opts__["test"]:
        return {"name": name, "changes": {"would": name}, "result": None, "comment": "would"}
    return {"name": name, "changes": {"did": name}, "result": True, "comment": "done"}

def flaky(name, **kwargs):
    CALLS.append(("flaky", name))
    good = len([c for c in CALLS if c[0] == "flaky"]) >= 3
    return {"name": name, "changes": {}, "result": good, "comment": "good" if good else "bad"}

def boom(name, **kwargs):
    raise ValueError("kaboom")

def meet(name, me, other, folder, **kwargs):
    # say it started, then wait (with a deadline) for the other one to have started
    import os, time
    open(os.path.join(folder, me), "w").close()
    deadline = time.monotonic() + 10
    while not os.path.exists(os.path.join(folder, other)):
        if time.monotonic() > deadline:
            return {"name": name, "changes": {}, "result": False, "comment": f"{other} never started"}
        time.sleep(0.005)
    open(os.path.join(folder, me + ".done"), "w").close()
    return {"name": name, "changes": {"met": other}, "result": True, "comment": f"{__low__['__id__']} met {other}"}

def seen(name, marker, **kwargs):
    import os
    found = os.path.exists(marker)
    return {"name": name, "changes": {}, "result": found, "comment": "after" if found else "too early"}
"""


def low(
    id_: str, state: str = "test", fun: str = "succeed_without_changes", order: float | None = None, **kw: Any
) -> dict:
    d = {
        "state": state,
        "__id__": id_,
        "name": kw.pop("name", id_),
        "fun": fun,
        "__sls__": "u",
        "__env__": "base",
        "order": 10000 if order is None else order,
    }
    d.update(kw)
    return d


@pytest.fixture()
def env(tmp_path: Path):
    states_dir = tmp_path / "states"
    states_dir.mkdir()
    (states_dir / "probe.py").write_text(textwrap.dedent(PROBE))

    def make(test: bool = False, **opts: Any):
        o = {"test": test, "id": "minion1", "failhard": False, **opts}
        salt = loader.minion_mods(o, extra_dirs=[FAKES / "modules"])
        states = loader.states(o, salt, extra_dirs=[states_dir, FAKES / "states"])
        return o, salt, states

    return make


def run(env, chunks, test=False, events=None, **opts):
    o, salt, states = env(test, **opts)
    fire = (lambda tag, data: events.append((tag, data))) if events is not None else None
    ret = run_low_chunks(chunks, RunContext.from_opts(o, salt, states, jid="20240101", fire_event=fire))
    return ret, states


def calls(states) -> list:
    return states.module("probe").CALLS


def by_id(ret: dict) -> dict:
    return {v.get("__id__"): v for v in ret.values()}


def test_result_fields_and_run_num(env) -> None:
    ret, _ = run(env, [low("b", order=10001, require=["a"]), low("a")])
    a, b = by_id(ret)["a"], by_id(ret)["b"]
    assert list(ret) == ["test_|-a_|-a_|-succeed_without_changes", "test_|-b_|-b_|-succeed_without_changes"]
    for r in (a, b):
        assert {
            "name",
            "result",
            "changes",
            "comment",
            "__sls__",
            "__id__",
            "__run_num__",
            "start_time",
            "duration",
        } <= set(r)
        assert isinstance(r["duration"], float)
    assert (a["__run_num__"], b["__run_num__"]) == (0, 1)


def test_dunders_mod_init_and_test_mode(env) -> None:
    chunks = [low("x", state="probe", fun="ok", order=1), low("y", state="probe", fun="ok", order=2)]
    ret, states = run(env, chunks, test=True)
    assert calls(states) == [("mod_init", "x"), ("ok", "x", True, "x", "base"), ("ok", "y", True, "y", "base")]
    assert by_id(ret)["x"]["result"] is None


def test_fire_event_tags(env) -> None:
    events: list = []
    chunks = [
        low("nano_stuff", name="nano", fire_event=True),
        low("custom", order=10001, fire_event="custom/tag/nano/finished"),
        low("quiet", order=10002),
    ]
    run(env, chunks, events=events)
    assert [t for t, _ in events] == [
        "salt/state_result/20240101/minion1/nano",
        "salt/state_result/20240101/minion1/custom/tag/nano/finished",
    ]
    assert events[0][1]["ret"]["result"] is True


def test_global_failhard_stops_and_skips_onfail(env) -> None:
    chunks = [
        low("bad", fun="fail_without_changes"),
        low("handler", order=10001, onfail=["bad"]),
        low("after", order=10002),
    ]
    ret, _ = run(env, chunks, failhard=True)
    assert list(by_id(ret)) == ["bad"]
    ret, _ = run(env, [dict(c, failhard=False) if c["__id__"] == "bad" else c for c in chunks], failhard=True)
    assert by_id(ret)["handler"]["comment"] == "Success!" and "after" in by_id(ret)


def test_prereq_runs_target_for_real_once(env) -> None:
    chunks = [
        low("down", state="probe", fun="ok", prereq=[{"probe": "site"}]),
        low("down2", state="probe", fun="ok", order=10001, prereq=[{"probe": "site"}]),
        low("site", state="probe", fun="ok", order=10002),
    ]
    ret, states = run(env, chunks)
    site_calls = [c for c in calls(states) if c[0] == "ok" and c[1] == "site"]
    assert [c[2] for c in site_calls] == [True, False]  # one test run, one real run
    assert by_id(ret)["site"]["changes"] == {"did": "site"}
    assert by_id(ret)["down"]["result"] is True and by_id(ret)["down2"]["result"] is True


def test_exception_and_missing_function(env) -> None:
    ret, _ = run(env, [low("x", state="probe", fun="boom"), low("y", state="probe", fun="nope", order=10001)])
    x, y = by_id(ret)["x"], ret["probe_|-y_|-y_|-nope"]
    assert x["result"] is False and x["comment"].startswith("An exception occurred in this state: Traceback")
    assert "ValueError: kaboom" in x["comment"]
    assert y["comment"].startswith("State 'probe.nope' was not found in SLS 'u'\n")


def test_retry_until_true(env) -> None:
    chunks = [low("f", state="probe", fun="flaky", retry={"attempts": 5, "interval": 0})]
    ret, _ = run(env, chunks)
    f = by_id(ret)["f"]
    assert f["result"] is True
    assert f["comment"] == (
        'Attempt 1: Returned a result of "False", with the following comment: "bad"\n'
        'Attempt 2: Returned a result of "False", with the following comment: "bad"\n'
        "good"
    )
    assert f["__run_num__"] == 2


def test_retry_waits_its_interval_and_splay_between_attempts(env) -> None:
    o, salt, states = env()
    chunks = [low("f", state="probe", fun="flaky", retry={"attempts": 5, "interval": 7, "splay": 3})]
    engine = Engine(chunks, RunContext.from_opts(o, salt, states))
    slept, drawn = [], []
    engine.run_state.sleep = slept.append
    engine.run_state.randint = lambda a, b: drawn.append((a, b)) or 2
    f = by_id(engine.run())["f"]
    assert f["result"] is True and slept == [9, 9] and drawn == [(0, 3), (0, 3)]
    assert f["duration"] >= 2 * 9 * 1000  # the waits count in the run's duration, as in Salt
    never = [low("n", fun="fail_without_changes", retry={"attempts": 2, "interval": 7})]
    engine = Engine(never, RunContext.from_opts(o, salt, states))
    engine.run_state.sleep = slept.append
    engine.run_state.randint = lambda a, b: pytest.fail("no splay asked for")
    assert by_id(engine.run())["n"]["result"] is False and slept == [9, 9, 7]


def test_reload_modules_reloads_loaders(env) -> None:
    o, salt, states = env()
    seen = []
    salt.reload = lambda: seen.append("salt")  # type: ignore[method-assign]
    run_low_chunks([low("x", fun="succeed_with_changes", reload_modules=True)], RunContext.from_opts(o, salt, states))
    assert seen == ["salt"]


def test_unless_per_names_entry(env, tmp_path: Path) -> None:
    flag = tmp_path / "flag"
    chunks = [
        low("d", state="cmd", fun="run", name=f"touch {flag}", order=10000.0001, unless=f"test -e {flag}"),
        low("d", state="cmd", fun="run", name="echo two", order=10000.0002, unless=f"test -e {flag}"),
    ]
    ret, _ = run(env, chunks)
    assert [r["comment"] for r in ret.values()] == [f'Command "touch {flag}" run', "unless condition is true"]


def test_cycle_names_every_state(env) -> None:
    chunks = [low("a", require=["b"]), low("b", order=10001, require=["c"]), low("c", order=10002, require=["a"])]
    ret, _ = run(env, chunks)
    c = by_id(ret)["c"]
    assert c["comment"] == "Recursive requisite found: u.c -> u.a -> u.b -> u.c"
    assert by_id(ret)["a"]["comment"] == "One or more requisite failed: u.b"


def test_long_chain_pulled_without_recursion(env) -> None:
    n = 5000
    # requisites point forward against the order, so every state pulls the next one
    chunks = [low(f"s{i}", order=10000 + i, require=[f"s{i + 1}"] if i + 1 < n else []) for i in range(n)]
    chunks[-1]["require"] = ["s0"]  # and close a 5000-long cycle
    ret, _ = run(env, chunks)
    assert len(ret) == n
    assert sum(1 for r in ret.values() if r["comment"].startswith("Recursive requisite found")) == 1


@pytest.mark.parametrize("seed", range(12))
def test_fuzz_random_graphs_terminate(env, seed: int) -> None:
    rnd = random.Random(seed)
    n = rnd.randint(150, 300)
    kinds = [
        "require",
        "watch",
        "onchanges",
        "onfail",
        "prereq",
        "require_any",
        "onfail_all",
        "listen",
        "require_in",
        "watch_in",
        "use",
    ]
    funs = ["succeed_with_changes", "succeed_without_changes", "fail_without_changes", "fail_with_changes"]
    cyclic = seed % 2 == 1
    chunks = []
    for i in range(n):
        c = low(f"s{i}", fun=rnd.choice(funs), order=rnd.choice([10000 + i, 10000 + i, 1, "x"]))
        if not isinstance(c["order"], (int, float)):
            c["order"] = 10000 + i
        for _ in range(rnd.randint(0, 3)):
            j = rnd.randrange(n) if cyclic else rnd.randrange(max(i, 1))
            if j == i and not cyclic:
                continue
            target = rnd.choice(
                [
                    {"test": f"s{j}"},
                    f"s{j}",
                    {"test": "s1*"},
                    {"sls": "u"} if cyclic else f"s{j}",
                    {"test": "missing"} if rnd.random() < 0.05 else f"s{j}",
                ]
            )
            c.setdefault(rnd.choice(kinds), []).append(target)
        chunks.append(c)
    rnd.shuffle(chunks)
    # Salt itself ends such runs with a RecursionError (or an UnboundLocalError) and on the
    # small ones leaves some states out and repeats run numbers (see the req_mixed_rand_*
    # goldens); briny must end, with well-formed results, and run every state that is left alone
    refs = [t if isinstance(t, str) else next(iter(t.items())) for c in chunks for k in kinds for t in c.get(k, [])]
    loner_ids = {
        c["__id__"]
        for c in chunks
        if not set(c) & set(kinds)
        and not any(
            ref[0] == "sls" or fnmatch.fnmatchcase(c["__id__"], ref if isinstance(ref, str) else ref[1]) for ref in refs
        )
    }
    assert loner_ids or cyclic
    for test in (False, True):
        ret, _ = run(env, [dict(c) for c in chunks], test=test)
        for v in ret.values():
            assert v["result"] in (True, False, None) and isinstance(v["comment"], str)
            assert isinstance(v["__run_num__"], int)
        ran = {v.get("__id__"): v for v in ret.values()}
        assert all(ran[i]["comment"] != "Recursive requisite found" for i in loner_ids)


def test_parallel_states_run_at_the_same_time(env, tmp_path: Path) -> None:
    """Two parallel states that each wait for the other to have started both succeed (run one
    after the other, the first would time out); a state requiring one waits for it; each
    parallel result carries __parallel__, in Salt's key order and with its launch's run number."""
    folder = tmp_path / "meet"
    folder.mkdir()
    f = str(folder)
    chunks = [
        low("a", state="probe", fun="meet", order=1, parallel=True, me="a", other="b", folder=f),
        low("b", state="probe", fun="meet", order=2, parallel=True, me="b", other="a", folder=f),
        low("c", state="probe", fun="seen", order=3, marker=f"{f}/a.done", require=[{"probe": "a"}]),
        low("d", order=4),
    ]
    ret, _ = run(env, chunks)
    a, b, c, d = (by_id(ret)[k] for k in "abcd")
    assert (a["result"], a["comment"], b["result"], b["comment"]) == (True, "a met b", True, "b met a")
    assert list(a) == [
        "name",
        "result",
        "changes",
        "comment",
        "__sls__",
        "__run_num__",
        "start_time",
        "duration",
        "__id__",
        "__parallel__",
    ]
    assert a["__parallel__"] is True and "__parallel__" not in c
    assert (c["result"], c["comment"]) == (True, "after")  # it waited for a
    assert [r["__run_num__"] for r in (a, b, c, d)] == [0, 1, 2, 3]


def test_a_parallel_states_loaders_are_released_when_its_thread_is_done(env, monkeypatch) -> None:
    made: list = []
    sibling = loader.LazyLoader.sibling

    def record(self, salt=None):
        made.append(sibling(self, salt))
        return made[-1]

    monkeypatch.setattr(loader.LazyLoader, "sibling", record)
    ret, states = run(env, [low("a", state="probe", fun="ok", parallel=True), low("b", state="probe", fun="ok")])
    assert [r["result"] for r in ret.values()] == [True, True]
    assert len(made) == 2  # the parallel state's __salt__ and __states__
    for sib in made:
        with pytest.raises(LoaderError):
            sib["test.succeed_without_changes"]
    assert states["probe.ok"] and not states._released  # the run's own loaders are the job's to release


def test_a_failed_parallel_state_fails_what_requires_it(env) -> None:
    chunks = [low("a", fun="fail_without_changes", order=1, parallel=True), low("b", order=2, require=["a"])]
    ret, _ = run(env, chunks)
    assert by_id(ret)["a"]["result"] is False and by_id(ret)["a"]["__parallel__"] is True
    assert by_id(ret)["b"]["comment"] == "One or more requisite failed: u.a"


def test_loops_where_salt_crashes_end_as_recursive(env) -> None:
    """Two states that prereq each other (Salt: RecursionError) and an onfail_all on a later state
    (Salt: UnboundLocalError): briny names them recursive and runs the rest."""
    chunks = [
        low("left", fun="succeed_with_changes", order=1, prereq=["right"], prerequired=["right"]),
        low("right", fun="succeed_with_changes", order=2, prereq=["left"], prerequired=["left"]),
        low("alarm", order=3, onfail_all=["probe"]),
        low("probe", fun="fail_without_changes", order=4),
        low("other", order=5),
    ]
    for test in (False, True):
        got = by_id(run(env, [dict(c) for c in chunks], test=test)[0])
        assert got["left"]["comment"] == "Recursive requisite found: u.left -> u.right -> u.left"
        assert got["left"]["result"] is False and got["right"]["result"] is not False
        assert got["alarm"]["comment"] == "Recursive requisite found" and got["alarm"]["result"] is False
        assert got["probe"]["result"] is False and got["other"]["result"] is True


# A parallel state that must really act, and a prereq target whose test run (on the main thread)
# waits, in test mode, until the parallel state has acted: the two overlap for certain.
GATE = """
import uuid

def act(name, checking, done, path, **kwargs):
    try:
        if not checking.wait(10):
            return {"name": name, "changes": {}, "result": False, "comment": "no prereq check started"}
        seen = [__opts__["test"], __salt__["flag.test"]()]
        if not any(seen):
            with open(path, "w") as f:
                f.write("acted")
        return {"name": name, "changes": {"seen": seen}, "result": None if seen[0] else True, "comment": "act"}
    finally:
        done.set()

def check(name, checking=None, done=None, seen_log=None, **kwargs):
    seen = [__opts__["test"], __salt__["flag.test"]()]
    if seen_log is not None:
        seen_log.append(seen)
    if checking is not None and seen[0]:
        checking.set()
        if not done.wait(10):
            return {"name": name, "changes": {}, "result": False, "comment": "the parallel state never ended"}
    changes = {"would" if seen[0] else "did": seen}
    return {"name": name, "changes": changes, "result": None if seen[0] else True, "comment": "check"}

def ident(name, **kwargs):
    return {"name": name, "changes": {}, "result": True, "comment": __salt__["flag.ident"]()}
"""
FLAG = """
import uuid

LOAD = uuid.uuid4().hex  # one per load of this module

def test():
    return __opts__["test"]

def ident():
    return LOAD
"""


@pytest.fixture()
def gated(tmp_path: Path):
    """Loaders with the ``gate`` states and the ``flag`` execution module."""
    (tmp_path / "gstates").mkdir()
    (tmp_path / "gstates" / "gate.py").write_text(textwrap.dedent(GATE))
    (tmp_path / "gmods").mkdir()
    (tmp_path / "gmods" / "flag.py").write_text(textwrap.dedent(FLAG))

    def run_gated(chunks: list[dict[str, Any]], test: bool = False) -> dict[str, Any]:
        opts = {"test": test, "id": "minion1", "failhard": False}
        salt = loader.minion_mods(opts, extra_dirs=[tmp_path / "gmods", FAKES / "modules"])
        states = loader.states(opts, salt, extra_dirs=[tmp_path / "gstates", FAKES / "states"])
        return by_id(run_low_chunks(chunks, RunContext.from_opts(opts, salt, states, jid="20240101")))

    return run_gated


def test_a_parallel_state_acts_while_a_prereq_is_checked_in_test_mode(gated, tmp_path: Path) -> None:
    """A prereq check's test mode is the check's own: a parallel state running meanwhile (in its
    thread) acts, and neither it nor the execution modules it calls read test mode; the check
    itself, and what it calls, do."""
    checking, done = threading.Event(), threading.Event()
    acted = tmp_path / "acted"
    seen: list[list[bool]] = []
    chunks = [
        low("p", state="gate", fun="act", order=1, parallel=True, checking=checking, done=done, path=str(acted)),
        low("down", fun="succeed_with_changes", order=2, prereq=[{"gate": "site"}]),
        low(
            "site",
            state="gate",
            fun="check",
            order=3,
            checking=checking,
            done=done,
            seen_log=seen,
            prerequired=[{"test": "down"}],
        ),
    ]
    ret = gated(chunks)
    p, down, site = ret["p"], ret["down"], ret["site"]
    assert (p["result"], p["changes"], p["__parallel__"]) == (True, {"seen": [False, False]}, True)
    assert acted.read_text() == "acted"
    assert down["result"] is True and down["changes"]
    assert (site["result"], site["changes"]) == (True, {"did": [False, False]})  # its real run, after down's
    assert seen == [[True, True], [False, False]]  # the check's state and execution modules, then the run's


def test_a_parallel_states_module_reload_is_its_own(gated) -> None:
    """``reload_modules`` in a parallel state reloads its thread's modules (Salt: its process's),
    not those of the run going on beside it."""
    chunks = [
        low("before", state="gate", fun="ident", order=1),
        low("p", fun="succeed_with_changes", order=2, parallel=True, reload_modules=True),
        low("after", state="gate", fun="ident", order=3, require=[{"test": "p"}]),
    ]
    ret = gated(chunks)
    assert ret["p"]["result"] is True and ret["p"]["__parallel__"] is True
    assert ret["after"]["result"] is True and ret["after"]["comment"] == ret["before"]["comment"]
