"""The event execution module: events reach a local bus with Salt's tag and data."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from briny.common.event import EventBus, EventListener, EventSender
from briny.common.loader import minion_mods
from tests.waiting import join_listener


@pytest.fixture
def sock_dir():
    with tempfile.TemporaryDirectory(prefix="bev", dir="/tmp") as d:  # short path for IPC sockets
        yield d


def test_send_reaches_the_bus(sock_dir: str) -> None:
    opts = {"id": "t", "sock_dir": sock_dir, "file_client": "local", "saltenv": "dev"}
    salt = minion_mods(opts, {"id": "t", "os": "Debian"}, {"p": 1, "q": 2})
    bus = EventBus(opts).start_thread()
    try:
        with EventListener(opts, "briny/*") as events:
            join_listener(events, EventSender(opts).fire, "briny/probe")  # subscribed before the event
            assert salt["event.send"](
                "briny/t1", data={"a": 1}, with_grains=["os"], with_pillar=True, with_env_opts=True, extra="x"
            )
            tag, data = next(events.iter(timeout=5))
    finally:
        bus.stop()
    assert tag == "briny/t1"
    assert {k: data[k] for k in ("a", "grains", "pillar", "saltenv", "extra")} == {
        "a": 1,
        "grains": {"os": "Debian"},
        "pillar": {"p": 1, "q": 2},
        "saltenv": "dev",
        "extra": "x",
    }
    assert "_stamp" in data


def test_without_a_bus_returns_false(tmp_path: Path) -> None:
    salt = minion_mods({"id": "t", "sock_dir": str(tmp_path), "file_client": "local"})
    assert salt["event.send"]("briny/t2", data={"a": 1}) is False
    assert salt["event.fire"]({"a": 1}, "") is False
