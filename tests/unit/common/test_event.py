"""The local event bus: fire, listen by glob, garbage frames, no bus."""

from __future__ import annotations

import time

import pytest
import zmq

from briny.common.event import EventBus, EventListener, EventSender, fire_event


@pytest.fixture
def bus(tmp_path):
    opts = {"sock_dir": str(tmp_path / "sock")}
    running = EventBus(opts).start_thread()
    yield opts, running
    running.stop()


def _settle(listener, opts):
    # a SUB socket needs a moment to join: fire probes until one arrives
    for _ in range(50):
        fire_event(opts, "probe/x", {})
        if listener.get_event(0.1) is not None:
            return
    raise AssertionError("listener never joined the bus")


def test_listener_gets_matching_events_in_order(bus):
    opts, _ = bus
    with EventListener(opts, "salt/state_result/*") as events, EventListener(opts, "probe/*") as probe:
        _settle(probe, opts)
        sender = EventSender(opts)
        for i in range(5):
            sender.fire(f"salt/state_result/1/m/s{i}", {"ret": {"result": True, "i": i}})
            sender.fire("salt/other/x", {"i": i})
        sender.close()
        got = list(events.iter(timeout=2, count=5))
    assert [t for t, _ in got] == [f"salt/state_result/1/m/s{i}" for i in range(5)]
    assert [d["ret"]["i"] for _, d in got] == list(range(5))
    assert all("_stamp" in d for _, d in got)


def test_garbage_frames_are_dropped_and_the_bus_keeps_serving(bus):
    opts, running = bus
    with EventListener(opts, "ok/*") as events:
        ctx = zmq.Context.instance()
        raw = ctx.socket(zmq.PUSH)
        raw.setsockopt(zmq.LINGER, 500)
        raw.connect(f"ipc://{running.pull_path}")
        raw.send_multipart([b"only-one-frame"])
        raw.send_multipart([b"tag", b"\xc1not msgpack"])
        raw.send_multipart([b"\xff\xfe", b"\x80"])
        raw.send(b"\x00" * 1000)
        raw.close()
        deadline = time.monotonic() + 5
        got = None
        while got is None and time.monotonic() < deadline:
            fire_event(opts, "ok/after", {"n": 1})
            got = events.get_event(0.2)
    assert got is not None and got[0] == "ok/after" and got[1]["n"] == 1


def test_firing_without_a_bus_returns_quickly(tmp_path):
    start = time.monotonic()
    fire_event({"sock_dir": str(tmp_path / "none")}, "x/y", {"a": 1}, linger_ms=50)
    assert time.monotonic() - start < 2
