"""The CLI's wait for returns (master/waiter.py): the deadline heap, the probes, and its cost per
return at thousands of minions (no scan of every wait per event)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from briny.master.jobcache.sqlite import SqliteJobCache
from briny.master.waiter import Deadlines, Waiter, _Wait

JID = "20261124060000000001"
PROBE = "20261124060000000002"


def ret(minion: str, value: Any = True, jid: str = JID) -> tuple[str, dict[str, Any]]:
    return f"salt/job/{jid}/ret/{minion}", {"return": value, "success": True, "retcode": 0}


class Script:
    """A listener handing out scripted events, then nothing (a silent bus)."""

    def __init__(self, events: list[tuple[str, dict[str, Any]]] | None = None) -> None:
        self.events = list(events or [])
        self.waited: list[float] = []

    def get_event(self, timeout: float | None = None) -> tuple[str, dict[str, Any]] | None:
        if self.events:
            return self.events.pop(0)
        self.waited.append(float(timeout or 0))
        time.sleep(min(float(timeout or 0), 0.01))  # a silent bus: the waiter's own wake-up
        return None


class Client:
    """The master client's find_job: records the questions, answers with a probe job."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []

    def find_job(self, jid: str, minions: list[str]) -> dict[str, Any]:
        self.asked.append((jid, list(minions)))
        return {"jid": PROBE, "minions": list(minions)}


class NoScan(dict):  # type: ignore[type-arg]  # a dict of waits that refuses to be walked
    def values(self) -> Any:
        raise AssertionError("the waits were scanned")

    def items(self) -> Any:
        raise AssertionError("the waits were scanned")

    def __iter__(self) -> Iterator[Any]:
        raise AssertionError("the waits were scanned")


def waiter(tmp_path: Path, listener: Script, timeout: float = 60.0, gather: float = 60.0) -> Waiter:
    opts = {"cachedir": str(tmp_path), "job_cache": "sqlite"}
    return Waiter(Client(), listener, opts, timeout, gather)  # type: ignore[arg-type]


def drain(w: Waiter, limit: float = 10.0) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + limit
    while w.active:
        assert time.monotonic() < deadline, "the waiter did not finish"
        out.extend(w.poll(0.05))
    return out


def test_deadlines_come_out_earliest_first_and_skip_moved_or_gone_waits():
    waits = {("j", m): _Wait("j", m, due) for m, due in (("a", 3.0), ("b", 1.0), ("c", 2.0))}
    d = Deadlines()
    for key, w in waits.items():
        d.push(key, w.due)
    assert d.earliest(waits) == 1.0
    waits[("j", "b")].deadline = 5.0  # moved: its old entry is stale
    d.push(("j", "b"), 5.0)
    del waits[("j", "c")]  # gone
    assert d.earliest(waits) == 3.0
    assert d.pop_due(waits, 4.0) == [("j", "a")]
    assert d.pop_due(waits, 4.0) == []
    assert d.pop_due(waits, 5.0) == [("j", "b")]
    assert d.earliest(waits) is None and len(d) == 0


def test_a_wait_pushed_twice_at_one_due_time_is_due_once():
    waits = {("j", "a"): _Wait("j", "a", 1.0)}
    d = Deadlines()
    d.push(("j", "a"), 1.0)
    d.push(("j", "a"), 1.0)
    assert d.pop_due(waits, 2.0) == [("j", "a")]


def test_returns_become_results_without_walking_the_waits(tmp_path):
    n = 5000
    minions = [f"m{i}" for i in range(n)]
    listener = Script([ret(m) for m in reversed(minions)])
    w = waiter(tmp_path, listener)
    w.waits = NoScan()
    w.add_job(JID, "test.ping", minions)
    results = drain(w)
    assert sorted(r.id for r in results) == sorted(minions)
    assert all(r.success and r.ret is True and r.jid == JID for r in results)
    assert w.client.asked == []  # type: ignore[attr-defined]


def test_the_waiter_sleeps_until_the_next_deadline_at_most(tmp_path):
    listener = Script()
    w = waiter(tmp_path, listener, timeout=0.2)
    w.add_job(JID, "test.ping", ["m1"])
    w.poll(5.0)
    assert listener.waited and listener.waited[0] <= 0.2


def test_a_return_missed_on_the_bus_is_read_from_the_job_cache_at_the_deadline(tmp_path):
    cache = SqliteJobCache(tmp_path / "jobs.sqlite")
    cache.save_load(JID, {"jid": JID, "fun": "test.ping"}, ["m1", "m2"])
    cache.save_return(JID, "m1", {"return": True, "retcode": 0, "success": True})
    cache.close()
    w = waiter(tmp_path, Script([ret("m2")]), timeout=0.1, gather=0.1)
    w.add_job(JID, "test.ping", ["m1", "m2"])
    results = {r.id: r for r in drain(w)}
    assert results["m1"].ret is True and results["m1"].returned
    assert results["m2"].ret is True
    assert w.client.asked == []  # type: ignore[attr-defined]


def test_silent_minions_are_asked_once_and_given_up_after_the_gather_timeout(tmp_path):
    w = waiter(tmp_path, Script(), timeout=0.05, gather=0.1)
    w.add_job(JID, "test.ping", ["m1", "m2"])
    start = time.monotonic()
    results = drain(w)
    assert time.monotonic() - start >= 0.15
    assert sorted(r.id for r in results) == ["m1", "m2"]
    assert all(not r.returned and not r.success and "did not return" in r.ret for r in results)
    assert w.client.asked == [(JID, ["m1", "m2"])]  # type: ignore[attr-defined]
    assert w.probes == {PROBE: {"m1": JID, "m2": JID}}  # never answered


class Probed(Script):
    """Silent but for the events scripted to come after the n-th find_job (each (n, event))."""

    def __init__(self, client: Client, later: list[tuple[int, tuple[str, dict[str, Any]]]]) -> None:
        super().__init__()
        self.client = client
        self.later = later

    def get_event(self, timeout: float | None = None) -> tuple[str, dict[str, Any]] | None:
        if self.later and len(self.client.asked) >= self.later[0][0]:
            return self.later.pop(0)[1]
        return super().get_event(timeout)


@pytest.mark.parametrize("late_return", [True, False])
def test_a_probe_answer_extends_a_running_minion_and_gives_up_an_idle_one_at_once(tmp_path, late_return):
    client = Client()
    later = [(1, ret("m1", {"jid": JID}, jid=PROBE)), (1, ret("m2", {}, jid=PROBE))]
    # m1 then returns within its second timeout, or is asked again and says it no longer runs it
    later.append((1, ret("m1", "done")) if late_return else (2, ret("m1", {}, jid=PROBE)))
    w = Waiter(client, None, {"cachedir": str(tmp_path)}, 0.1, 30.0)  # type: ignore[arg-type]
    w.listener = Probed(client, later)
    w.add_job(JID, "test.echo", ["m1", "m2"])
    first = drain_until(w, lambda got: any(r.id == "m2" for r in got))
    m2 = next(r for r in first if r.id == "m2")
    assert not m2.returned  # given up at its probe's answer, not after the 30 s gather timeout
    rest = [r for r in first if r.id == "m1"] + drain(w)
    m1 = next(r for r in rest if r.id == "m1")
    assert m1.returned is late_return
    assert len(client.asked) == (1 if late_return else 2)
    if late_return:
        assert m1.ret == "done"
    assert not w.probes


def drain_until(w: Waiter, done: Any, limit: float = 10.0) -> list[Any]:
    got: list[Any] = []
    deadline = time.monotonic() + limit
    while not done(got):
        assert time.monotonic() < deadline, "the waiter did not get there"
        got.extend(w.poll(0.05))
    return got
