"""``control`` on the minion's local IPC: a call run outside the daemon (``briny-call --local``)
reaches the daemon's running schedule and beacons (:func:`briny.minion.localapi.daemon_control`),
over a real socket served on a loop of its own."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from briny.minion.localapi import LocalAPIServer, daemon_control


class Runner:
    """A daemon's schedule or beacons: records each action, on the loop's thread."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any], bool]] = []

    def control(self, action: str, args: dict[str, Any]) -> Any:
        on_loop = asyncio.get_running_loop() is not None
        self.calls.append((action, args, on_loop))
        if action == "boom":
            raise RuntimeError("the runner failed")
        return self.answer


class Agent:
    def __init__(self) -> None:
        self.scheduler = Runner({"job1": {"function": "test.ping", "seconds": 5}})
        self.beacons = Runner({"comment": "Added beacon: disk.", "result": True})


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[dict[str, Any], Agent]]:
    opts = {"sock_dir": str(tmp_path / "sock"), "file_client": "local"}
    agent = Agent()
    loop = asyncio.new_event_loop()
    api = LocalAPIServer(opts, agent)
    api.bind()
    task = loop.create_task(api.serve())
    thread = threading.Thread(target=loop.run_forever, name="daemon-loop")
    thread.start()
    try:
        yield opts, agent
    finally:
        loop.call_soon_threadsafe(task.cancel)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        api.close()
        loop.close()


def test_the_daemons_schedule_and_beacons_answer_a_call_outside_it(served: tuple[dict[str, Any], Agent]) -> None:
    opts, agent = served
    assert daemon_control(opts, "schedule")("list", {"where": None}) == {
        "job1": {"function": "test.ping", "seconds": 5}
    }
    assert daemon_control(opts, "beacons")("add", {"name": "disk", "beacon_data": [{"/": 0}]}) == {
        "comment": "Added beacon: disk.",
        "result": True,
    }
    assert agent.scheduler.calls == [("list", {"where": None}, True)]
    assert agent.beacons.calls == [("add", {"name": "disk", "beacon_data": [{"/": 0}]}, True)]


def test_a_failing_action_is_none_and_the_daemon_keeps_answering(
    served: tuple[dict[str, Any], Agent], caplog: pytest.LogCaptureFixture
) -> None:
    opts, agent = served
    with caplog.at_level("WARNING", logger="briny.minion.localapi"):
        assert daemon_control(opts, "schedule")("boom", {}) is None
    assert "schedule.boom: the minion daemon answered with an error: the minion failed on this request" in caplog.text
    assert daemon_control(opts, "schedule")("list", {}) == agent.scheduler.answer


def test_without_a_daemon_there_is_no_running_schedule(tmp_path: Path) -> None:
    opts = {"sock_dir": str(tmp_path / "none"), "file_client": "local"}
    assert daemon_control(opts, "schedule")("list", {}) is None
    assert daemon_control(opts, "beacons")("list", {}) is None


def test_a_daemon_that_does_not_answer_in_time_is_no_running_schedule(
    served: tuple[dict[str, Any], Agent], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A daemon whose loop is stuck holds ``briny-call`` up for CONTROL_WAIT at most."""

    import briny.minion.localapi as localapi

    opts, agent = served
    release = threading.Event()
    monkeypatch.setattr(localapi, "CONTROL_WAIT", 0.3)
    agent.scheduler.control = lambda action, args: release.wait(10)  # type: ignore[method-assign]  # a stuck loop
    try:
        with caplog.at_level("DEBUG", logger="briny.minion.localapi"):
            assert daemon_control(opts, "schedule")("list", {}) is None  # while the loop is stuck
    finally:
        release.set()
    assert "the minion gave no answer within 0.3 s" in caplog.text
