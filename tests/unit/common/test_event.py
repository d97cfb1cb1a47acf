"""The local event bus: fire, listen by glob, garbage frames, no bus."""

from __future__ import annotations

import subprocess
import sys

import msgpack
import pytest
import zmq

from briny.common.event import MAX_TAG_BYTES, EventBus, EventListener, EventSender, decode, encode, fire_event
from briny.common.unpacking import MAX_ITEMS
from tests.waiting import join_listener, wait_until


@pytest.fixture
def bus(tmp_path):
    opts = {"sock_dir": str(tmp_path / "sock")}
    running = EventBus(opts).start_thread()
    yield opts, running
    running.stop()


def test_listener_gets_matching_events_in_order(bus):
    opts, _ = bus
    sender = EventSender(opts)
    with EventListener(opts, "salt/state_result/*") as events:
        join_listener(events, sender.fire, "salt/state_result/probe")
        for i in range(5):
            sender.fire(f"salt/state_result/1/m/s{i}", {"ret": {"result": True, "i": i}})
            sender.fire("salt/other/x", {"i": i})
        sender.close()
        got = list(events.iter(timeout=2, count=5))
    assert [t for t, _ in got] == [f"salt/state_result/1/m/s{i}" for i in range(5)]
    assert [d["ret"]["i"] for _, d in got] == list(range(5))
    assert all("_stamp" in d for _, d in got)
    # numbered by the bus: the filtered salt/other/x events took every other number (no notice)
    seqs = [d["_seq"] for _, d in got]
    assert [b - a for a, b in zip(seqs, seqs[1:])] == [2, 2, 2, 2]


class RawSubscriber:
    """A bare SUB socket on the bus: every frame the bus republishes, parsed or not (an
    ``EventListener`` would skip what does not parse itself, hiding what the bus let through)."""

    def __init__(self, running) -> None:
        self.sock = zmq.Context.instance().socket(zmq.SUB)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.SUBSCRIBE, b"")
        self.sock.connect(f"ipc://{running.pub_path}")

    def get_event(self, timeout):
        if not self.sock.poll(int(timeout * 1000)):
            return None
        frames = self.sock.recv_multipart()
        return decode(frames) or (frames[0][:40].decode("utf-8", "replace"), {"unparsed": len(frames)})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()


def _raw_pusher(running):
    raw = zmq.Context.instance().socket(zmq.PUSH)
    raw.setsockopt(zmq.LINGER, 500)
    raw.connect(f"ipc://{running.pull_path}")
    return raw


def test_garbage_frames_are_dropped_and_the_bus_keeps_serving(bus):
    opts, running = bus
    with RawSubscriber(running) as events:
        raw = _raw_pusher(running)
        join_listener(events, lambda tag, data: raw.send_multipart(encode(tag, data)), "probe")
        raw.send_multipart([b"only-one-frame"])
        raw.send_multipart([b"tag", b"\xc1not msgpack"])
        raw.send_multipart([b"\xff\xfe", b"\x80"])
        raw.send(b"\x00" * 1000)
        raw.send_multipart(encode("ok/after", {"n": 1}))  # same pipe: pulled after the garbage
        raw.close()
        got = events.get_event(5)
    assert got is not None and got[0] == "ok/after" and got[1]["n"] == 1


def test_events_past_the_limits_are_not_republished(bus):
    opts, running = bus
    with RawSubscriber(running) as events:
        raw = _raw_pusher(running)
        join_listener(events, lambda tag, data: raw.send_multipart(encode(tag, data)), "probe")
        too_many = MAX_ITEMS + 1
        raw.send_multipart([b"big/items", b"\x81\xa1x\xdd" + too_many.to_bytes(4, "big") + b"\xc0" * too_many])
        raw.send_multipart([b"long/" + b"t" * MAX_TAG_BYTES, msgpack.packb({"n": 1})])
        raw.send_multipart([b"ok/after", msgpack.packb({"n": 2})])  # same pipe: after the two above
        raw.close()
        got = events.get_event(5)
    # the next event after the two past the limits is the one sent behind them
    assert got is not None and got[0] == "ok/after" and got[1]["n"] == 2


def test_firing_without_a_bus_does_not_wait_for_one(tmp_path, monkeypatch, caplog):
    """No bus socket: the event is dropped at once, not after the linger (a loop of key changes
    with the master stopped waited the linger for each one): no socket is made to wait on. How
    long it takes is measured in bench/timebounds.py."""

    def no_context(*_args, **_kwargs):
        raise AssertionError("a ZeroMQ context was made for a bus that is not there")

    monkeypatch.setattr("briny.common.event.zmq.Context", no_context)
    with caplog.at_level("DEBUG", logger="briny.common.event"):
        for n in range(3):
            fire_event({"sock_dir": str(tmp_path / "none")}, "x/y", {"a": n}, linger_ms=5000)
    assert caplog.text.count("not sent: no event bus at") == 3


def test_an_event_fired_by_a_process_that_exits_at_once_reaches_the_bus(tmp_path):
    """A job's process ends with ``os._exit`` right after its last ``event.send``: fire_event must
    not return while the event still waits in ZeroMQ's I/O thread (it was lost before)."""
    got: list[str] = []
    opts = {"sock_dir": str(tmp_path / "sock")}
    running = EventBus(opts, sink=lambda tag, data: got.append(tag)).start_thread()
    code = (
        "import os, sys\n"
        "from briny.common.event import fire_event\n"
        "fire_event({'sock_dir': sys.argv[1]}, 'early/' + sys.argv[2], {})\n"
        "os._exit(0)\n"
    )
    try:
        procs = [subprocess.Popen([sys.executable, "-c", code, opts["sock_dir"], str(n)]) for n in range(5)]
        assert [proc.wait(30) for proc in procs] == [0] * 5
        wait_until(lambda: len(got) == 5, 5, "the five events on the bus")
    finally:
        running.stop()
    assert sorted(got) == [f"early/{n}" for n in range(5)]


def test_a_bus_that_cannot_bind_says_why_at_once(tmp_path):
    """A sock_dir that is a file, or too deep for a socket path: start_thread raises a BrinyError
    naming the problem right away (no wait for the start timeout), and the process goes on."""
    from briny.common.exceptions import BrinyError

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(BrinyError, match="did not start: .*a-file"):
        EventBus({"sock_dir": str(blocker / "sock")}).start_thread(timeout=30)
    with pytest.raises(BrinyError, match="too long for an IPC socket"):
        EventBus({"sock_dir": str(tmp_path / ("d" * 120))}).start_thread(timeout=30)
    # how long it takes (not the 30 s start timeout) is measured in bench/timebounds.py


def test_ipc_path_refuses_paths_a_socket_cannot_have():
    from briny.common.exceptions import ConfigError
    from briny.common.ipcpath import IPC_PATH_MAX, ipc_path

    ok = "/" + "s" * (IPC_PATH_MAX - 1)
    assert ipc_path(ok) == ok
    with pytest.raises(ConfigError, match=f"{IPC_PATH_MAX + 1} > {IPC_PATH_MAX} bytes"):
        ipc_path(ok + "s")
    with pytest.raises(ConfigError):
        ipc_path("/" + "é" * 60)  # bytes count, not characters


# -- no silent loss: numbered events, dropped notices ------------------------------------------


def test_a_listener_that_falls_behind_gets_a_dropped_notice_with_the_count(tmp_path):
    """A listener that does not read while 3,000 large events pass: the bus drops past its
    buffer, and the listener gets ``salt/event/dropped`` with counts that, added to the events it
    did get, make exactly what was fired; then it keeps receiving."""
    opts = {"sock_dir": str(tmp_path / "sock"), "event_listener_hwm": 10, "event_sender_hwm": 100000}
    running = EventBus(opts).start_thread()
    sender = EventSender(opts)
    try:
        with EventListener(opts, "burst/*") as events:
            join_listener(events, sender.fire, "burst/probe")
            fired = 3000
            for i in range(fired):
                sender.fire("burst/e", {"i": i, "pad": "x" * 2000})
            got, dropped, notices = 0, 0, 0
            while (event := events.get_event(1.0)) is not None:  # drain what the buffers held
                if event[0] == "salt/event/dropped":
                    dropped += event[1]["count"]
                    notices += 1
                elif event[0] == "burst/e":
                    got += 1
            join_listener(events, sender.fire, "burst/probe")  # a later number shows a gap at the tail
            # join_listener takes what came while joining: count it again from the listener's total
            assert events.dropped >= dropped
            assert got + events.dropped == fired, (got, events.dropped)
            assert events.dropped > 0 and got > 0
            sender.fire("burst/after", {"n": 1})
            assert events.get_event(5)[0] == "burst/after"
    finally:
        sender.close()
        running.stop()


def test_a_sender_that_could_not_hand_events_over_reports_how_many(tmp_path):
    """Events fired while nothing takes them, past ``event_sender_hwm``, are counted; the next
    event the sender gets through is preceded by ``salt/event/dropped`` (``where: sender``)."""
    opts = {"sock_dir": str(tmp_path / "sock"), "event_sender_hwm": 5}
    (tmp_path / "sock").mkdir(mode=0o700)
    sender = EventSender(opts)  # no bus yet: the pipe fills, the rest is counted
    for i in range(50):
        sender.fire("early/e", {"i": i})
    lost = sender.dropped
    assert 0 < lost < 50
    running = EventBus(opts).start_thread()
    prober = EventSender(opts)
    try:
        queued = 50 - lost  # the sender's pipe reconnects to the new bus and hands over what it held
        wait_until(lambda: running.seq >= queued, 10, "the events the sender held to reach the bus")
        with EventListener(opts, "late/*") as events:
            join_listener(events, prober.fire, "late/probe")
            sender.fire("late/one", {})
            first, second = events.get_event(5), events.get_event(5)
    finally:
        sender.close()
        prober.close()
        running.stop()
    assert first[0] == "salt/event/dropped" and first[1]["count"] == lost and first[1]["where"] == "sender"
    assert second[0] == "late/one" and sender.dropped == 0


def test_require_bus_says_clearly_that_no_bus_runs(tmp_path):
    from briny.common.exceptions import EventBusNotRunning

    with pytest.raises(EventBusNotRunning, match="master event bus is not running"):
        EventListener({"sock_dir": str(tmp_path)}, "*", name="master", require_bus=True)


def test_a_listener_fires_on_its_own_bus(bus):
    opts, _ = bus
    with EventListener(opts, "mine/*", require_bus=True) as events:
        join_listener(events, events.fire, "mine/probe")
        events.fire("mine/done", {"ok": True})
        tag, data = events.get_event(5)
    assert tag == "mine/done" and data["ok"] is True and "_seq" in data


def test_wait_ready_returns_once_the_subscription_is_live_and_keeps_what_came_meanwhile(bus):
    opts, _ = bus
    sender = EventSender(opts)
    with EventListener(opts, "salt/job/*") as events, EventListener(opts, "*") as everything:
        assert everything.wait_ready(timeout=5) is True
        assert events.wait_ready(timeout=5) is True
        sender.fire("salt/job/1/ret/m1", {"n": 1})  # published after ready: never missed
        tag, data = events.get_event(timeout=5)
        assert (tag, data["n"]) == ("salt/job/1/ret/m1", 1)
        assert events.get_event(timeout=0.1) is None  # its own markers are not handed out
        assert events.dropped == 0
        # a listener on every tag sees the other's markers (documented in docs/events.md), then the event
        seen = [tag for tag, _ in everything.iter(timeout=0.5)]
        assert seen[-1] == "salt/job/1/ret/m1"
        assert all(t.startswith("salt/event/listener/") for t in seen[:-1]) and seen[:-1]
    sender.close()


def test_wait_ready_without_a_bus_gives_up_after_its_timeout(tmp_path):
    opts = {"sock_dir": str(tmp_path / "sock")}
    with EventListener(opts, "*") as events:
        assert events.wait_ready(timeout=0.3) is False  # its duration: bench/timebounds.py
