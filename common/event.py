"""The local event bus: fire events, listen to them by tag glob, never lose one silently.

Runs on a host with a daemon (the minion's bus, ``name="minion"``, and the
master's, ``name="master"``) and in any local process that fires or listens.
Two IPC sockets under ``sock_dir`` make the bus, owned by one
:class:`EventBus` (in the daemon, or in a test):

- ``<name>_event_pull.ipc``: processes that fire connect a PUSH socket and
  send; :class:`EventSender` does this and returns at once, :func:`fire_event`
  (one event) once the bus has the event;
- ``<name>_event_pub.ipc``: listeners connect a SUB socket;
  :class:`EventListener` does this and filters by tag glob.

The bus republishes every event it pulls, numbered: frames are
``[tag, msgpack(data), seq]`` (UTF-8 tag; ``seq`` the bus's own counter, 8
bytes big-endian, from 1 at each start). The data of every event gets
``_stamp`` (ISO time, UTC) as Salt's does, and a listener sees the number as
``_seq``. A frame that does not parse is dropped with a log line, and so is
one past the limits of :mod:`briny.common.unpacking` (a frame over
``MAX_FRAME`` is refused by the socket, a tag over 4096 bytes is dropped);
the bus keeps serving.

No silent loss. ZeroMQ drops what a slow peer cannot take; briny counts it:

- the bus holds up to ``event_listener_hwm`` events for each listener (and the
  listener as many again); a listener that falls further behind misses events,
  sees the gap in ``seq`` and gets a ``salt/event/dropped`` event first (data
  ``count``, ``first``, ``last``: the numbers it missed, ``where: listener``),
  whatever its glob;
- a firing process holds up to ``event_sender_hwm`` events while the bus is
  busy; past that it drops them, counts them, and sends ``salt/event/dropped``
  (``count``, ``where: sender``, ``pid``) as soon as the bus takes events again.

Events lost while a bus restarts are not counted (its ``seq`` starts again at 1).
When no bus is running, :func:`fire_event` drops the event after a short
linger (as ``salt-call --local`` does without a minion daemon): firing never
blocks a state run. The sockets are created owner-only (mode 0600 folder
entries under a 0700 ``sock_dir``): only the daemon's user listens or fires.

Python API (``docs/events.md`` has the tags and a worked example)::

    from briny.common.config import load_master_config
    from briny.common.event import EventListener

    opts = load_master_config("/etc/briny")
    with EventListener(opts, "salt/state_result/*", name="master", require_bus=True) as events:
        for tag, data in events.iter(timeout=10):
            print(tag, data["_seq"], data["data"]["ret"]["result"])  # a minion's event: Salt's wrapper
        events.fire("my/app/done", {"ok": True})

A bus may be given a *sink* (``EventBus(opts, sink=f)`` or ``bus.sink = f``): ``f(tag, data)``
is called on the bus's thread for every event it republishes (the master stores them so,
``event_return``: :mod:`briny.master.eventreturn`). It must be cheap and never block (queue
the event and return); what it raises is logged and the bus goes on.

``EventBus.run()`` is blocking (a thread or a daemon's worker);
``EventBus.start_thread()`` starts it in a daemon thread for tests and tools.
"""

from __future__ import annotations

import datetime
import fnmatch
import logging
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import msgpack
import zmq

from . import config
from .exceptions import BrinyError, ConfigError, EventBusNotRunning, WireError
from .ipcpath import ipc_path
from .unpacking import MAX_FRAME, unpack

log = logging.getLogger(__name__)

DEFAULT_NAME = "minion"
MAX_TAG_BYTES = 4096  # a longer tag is not an event: dropped
DROPPED_TAG = "salt/event/dropped"
READY_PREFIX = "salt/event/listener/"  # + a random hex: a listener's own marker (wait_ready)
BEACON_PREFIX = "salt/beacon/"  # a beacon's events: on the master's bus as their data, not wrapped (Salt's)
_SEQ_BYTES = 8

Sink = Callable[[str, dict[str, Any]], None]  # called on the bus's thread for each event (see the docstring)


def stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None).isoformat()


def _paths(opts: dict[str, Any], name: str) -> tuple[str, str]:
    sock_dir = str(opts.get("sock_dir") or "/var/run/briny")
    return (os.path.join(sock_dir, f"{name}_event_pull.ipc"), os.path.join(sock_dir, f"{name}_event_pub.ipc"))


def encode(tag: str, data: dict[str, Any]) -> list[bytes]:
    payload = dict(data)
    payload.setdefault("_stamp", stamp())
    return [tag.encode("utf-8"), msgpack.packb(payload, use_bin_type=True, default=str)]


def _parse(frames: list[bytes]) -> tuple[str, dict[str, Any], int | None] | None:
    """(tag, data, seq) of a frame pair (seq None) or a numbered triple; None when it does not parse."""
    if len(frames) not in (2, 3) or len(frames[0]) > MAX_TAG_BYTES:
        return None
    seq = None
    if len(frames) == 3:
        if len(frames[2]) != _SEQ_BYTES:
            return None
        seq = int.from_bytes(frames[2], "big")
    try:
        tag = frames[0].decode("utf-8")
        data = unpack(frames[1])
    except (UnicodeDecodeError, WireError):
        return None
    if not isinstance(data, dict):
        return None
    return tag, data, seq


def decode(frames: list[bytes]) -> tuple[str, dict[str, Any]] | None:
    """(tag, data) of an event's frames (as fired, or as the bus republishes them), or None when
    they do not parse."""
    parsed = _parse(frames)
    return None if parsed is None else (parsed[0], parsed[1])


def fire_event(
    opts: dict[str, Any], tag: str, data: dict[str, Any], *, name: str = DEFAULT_NAME, linger_ms: int = 200
) -> None:
    """Send one event to the bus; returns once the bus has it (at most ``linger_ms`` later when no
    bus takes it), so a process may exit right after, even with ``os._exit`` (a job's process);
    never raises for a missing bus, and does not wait for one: with no bus socket the event is dropped
    at once (logged at debug), as when a bus does not take it."""
    pull, _ = _paths(opts, name)
    if not os.path.exists(pull):  # no bus has bound its socket: nothing would take the event
        log.debug("event %s not sent: no event bus at %s", tag, pull)
        return
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()  # its own: term() below waits for this event only
    sock = ctx.socket(zmq.PUSH)
    sock.setsockopt(zmq.LINGER, linger_ms)
    try:
        sock.connect(f"ipc://{ipc_path(pull)}")
        sock.send_multipart(encode(tag, data), flags=zmq.NOBLOCK)
    except (zmq.ZMQError, ConfigError) as exc:
        log.debug("event %s not sent: %s", tag, exc)
    finally:
        sock.close()
        # ZeroMQ sends from its I/O thread: until the context ends, the event may still be queued here,
        # and a process that exits at once (a job's os._exit) would lose it. term() waits until the bus
        # has it, or ``linger_ms`` when no bus takes it.
        ctx.term()


class EventSender:
    """A PUSH socket kept open for many events (a state run, a daemon).

    Firing never raises or blocks: when the socket cannot be opened (say ``sock_dir``
    makes a path longer than an IPC socket allows) the problem is logged once
    and events are dropped; when the bus is busy past ``event_sender_hwm`` events, the
    ones that do not fit are counted and a ``salt/event/dropped`` event says how many
    once the bus takes events again.
    """

    def __init__(self, opts: dict[str, Any], name: str = DEFAULT_NAME, linger_ms: int = 1000) -> None:
        pull, _ = _paths(opts, name)
        self._lock = threading.Lock()
        self.dropped = 0  # events not handed to the bus and not reported yet
        self._sock: zmq.Socket[bytes] | None = zmq.Context.instance().socket(zmq.PUSH)
        self._sock.setsockopt(zmq.LINGER, linger_ms)
        self._sock.setsockopt(zmq.SNDHWM, config.count(opts, "event_sender_hwm"))
        try:
            self._sock.connect(f"ipc://{ipc_path(pull)}")
        except (zmq.ZMQError, ConfigError) as exc:
            log.error("events will not be sent: %s", exc)
            self._sock.close()
            self._sock = None

    def fire(self, tag: str, data: dict[str, Any]) -> None:
        """Send one event; a drop is counted and reported later, never raised."""
        if self._sock is None:
            return
        with self._lock:
            if self.dropped and self._send(DROPPED_TAG, {"count": self.dropped, "where": "sender", "pid": os.getpid()}):
                log.warning("%d events were dropped: the event bus was busy", self.dropped)
                self.dropped = 0
            if not self._send(tag, data):
                self.dropped += 1

    def _send(self, tag: str, data: dict[str, Any]) -> bool:
        assert self._sock is not None
        try:
            self._sock.send_multipart(encode(tag, data), flags=zmq.NOBLOCK)
        except zmq.Again:
            return False
        except zmq.ZMQError as exc:
            log.debug("event %s not sent: %s", tag, exc)
            return False
        return True

    __call__ = fire

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()


class EventBus:
    """Owns the two IPC sockets and republishes what it pulls, numbered."""

    def __init__(self, opts: dict[str, Any], name: str = DEFAULT_NAME, *, sink: Sink | None = None) -> None:
        self.pull_path, self.pub_path = _paths(opts, name)
        self.sink = sink  # may be set while the bus runs
        self.hwm = config.count(opts, "event_listener_hwm")
        self.pull_hwm = config.count(opts, "event_sender_hwm")
        self.seq = 0  # events republished since the bus started
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    def run(self) -> None:
        sock_dir = os.path.dirname(self.pull_path)
        os.makedirs(sock_dir, mode=0o700, exist_ok=True)
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
        pull, pub = ctx.socket(zmq.PULL), ctx.socket(zmq.PUB)
        pub.setsockopt(zmq.SNDHWM, self.hwm)
        pull.setsockopt(zmq.RCVHWM, self.pull_hwm)
        pull.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME)
        for sock in (pull, pub):
            sock.setsockopt(zmq.LINGER, 0)
        old = os.umask(0o077)
        try:
            pull.bind(f"ipc://{ipc_path(self.pull_path)}")
            pub.bind(f"ipc://{ipc_path(self.pub_path)}")
        finally:
            os.umask(old)
        self._ready.set()
        poller = zmq.Poller()
        poller.register(pull, zmq.POLLIN)
        try:
            while not self._stop.is_set():
                if not dict(poller.poll(100)):
                    continue
                for _ in range(1000):  # a batch, then look at the stop flag again
                    try:
                        frames = pull.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    event = decode(frames) if len(frames) == 2 else None
                    if event is None:
                        log.warning("dropped an event frame that does not parse (%d parts)", len(frames))
                        continue
                    self.seq += 1
                    pub.send_multipart([*frames, self.seq.to_bytes(_SEQ_BYTES, "big")])
                    sink = self.sink
                    if sink is not None:
                        self._give(sink, *event)
        finally:
            pull.close()
            pub.close()
            for path in (self.pull_path, self.pub_path):
                try:
                    os.unlink(path)
                except OSError:
                    pass

    @staticmethod
    def _give(sink: Sink, tag: str, data: dict[str, Any]) -> None:
        try:
            sink(tag, data)
        except Exception as exc:  # noqa: BLE001 - a sink's failure never stops the bus; logged
            log.error("the event bus's sink failed on %s: %s", tag, exc)

    def start_thread(self, timeout: float = 5.0) -> "EventBus":
        """Run the bus in a daemon thread; BrinyError when it is not serving within ``timeout``."""
        failed: list[BaseException] = []

        def run() -> None:
            try:
                self.run()
            except Exception as exc:  # noqa: BLE001 - reported by start_thread (the bus could not bind)
                log.error("the event bus stopped: %s", exc)
                failed.append(exc)
                self._ready.set()

        self._thread = threading.Thread(target=run, name="briny-event-bus", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or failed:
            why = f": {failed[0]}" if failed else f" within {timeout:g} s"
            raise BrinyError(f"the event bus on {self.pull_path} did not start{why}")
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)


class EventListener:
    """Events whose tag matches ``tag_glob`` (fnmatch, case-sensitive), from now on, in the order
    the bus numbered them; ``salt/event/dropped`` notices come whatever the glob.

    ``require_bus``: raise :class:`EventBusNotRunning` at once when no bus listens on the socket
    (or this user may not reach it) instead of waiting for events that cannot come.
    :meth:`fire` sends an event to the same bus.
    """

    def __init__(
        self, opts: dict[str, Any], tag_glob: str = "*", name: str = DEFAULT_NAME, *, require_bus: bool = False
    ) -> None:
        _, pub_path = _paths(opts, name)
        self.opts, self.name, self.tag_glob = opts, name, tag_glob
        self.dropped = 0  # events this listener missed (counted from the gaps in the bus's numbers)
        self._last_seq: int | None = None
        self._pending: deque[tuple[str, dict[str, Any]]] = deque()
        self._sender: EventSender | None = None
        if require_bus:
            _check_bus(pub_path, name)
        self._sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.SUB)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.setsockopt(zmq.RCVHWM, config.count(opts, "event_listener_hwm"))
        # every event, filtered here: a gap in the numbers is then always a loss, never a filtered tag
        self._sock.setsockopt(zmq.SUBSCRIBE, b"")
        self._sock.connect(f"ipc://{ipc_path(pub_path)}")

    def _take(self, frames: list[bytes]) -> tuple[str, dict[str, Any]] | None:
        """The event of one message if its tag matches (a dropped notice queued first when the
        numbers jumped); None otherwise."""
        if len(frames) not in (2, 3) or len(frames[0]) > MAX_TAG_BYTES:
            return None
        seq = int.from_bytes(frames[2], "big") if len(frames) == 3 and len(frames[2]) == _SEQ_BYTES else None
        if seq is not None:
            last, self._last_seq = self._last_seq, seq
            if last is not None and seq > last + 1:
                missed = seq - last - 1
                self.dropped += missed
                log.warning("an event listener on %r fell behind: %d events dropped", self.tag_glob, missed)
                notice = {"count": missed, "first": last + 1, "last": seq - 1, "where": "listener", "_stamp": stamp()}
                self._pending.append((DROPPED_TAG, notice))
        try:
            tag = frames[0].decode("utf-8")
        except UnicodeDecodeError:
            return None
        if tag != DROPPED_TAG and not fnmatch.fnmatchcase(tag, self.tag_glob):
            return None
        parsed = _parse(frames)
        if parsed is None:
            return None
        data = parsed[1]
        if seq is not None:
            data["_seq"] = seq
        return tag, data

    def get_event(self, timeout: float | None = 5.0) -> tuple[str, dict[str, Any]] | None:
        """The next matching event (or dropped notice), or None after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._pending:
                return self._pending.popleft()
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if wait is not None and wait <= 0 and not self._sock.poll(0):
                return None
            if not self._sock.poll(None if wait is None else int(wait * 1000)):
                return None
            event = self._take(self._sock.recv_multipart())
            if event is not None:
                self._pending.append(event)

    def iter(self, timeout: float | None = 5.0, count: int | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Matching events until ``count`` were seen or none came for ``timeout`` seconds."""
        seen = 0
        while count is None or seen < count:
            event = self.get_event(timeout)
            if event is None:
                return
            seen += 1
            yield event

    def wait_ready(self, timeout: float = 5.0, every: float = 0.05) -> bool:
        """Wait until this listener's subscription is live on the bus (a SUB socket misses what is
        published before the bus has its subscription): fire a marker event
        (``salt/event/listener/<hex>``) every ``every`` seconds until one comes back. Events that
        arrive meanwhile are kept for :meth:`get_event`; the marker itself is not. False when no
        marker came back within ``timeout`` (no bus, or a bus too busy)."""
        marker = f"{READY_PREFIX}{uuid.uuid4().hex}".encode()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.fire(marker.decode(), {"_stamp": stamp()})
            until = min(deadline, time.monotonic() + every)
            while (wait := until - time.monotonic()) > 0 and self._sock.poll(int(wait * 1000) + 1):
                frames = self._sock.recv_multipart()
                event = self._take(frames)  # numbers checked for every message, the marker's too
                if frames[0] == marker:
                    return True
                if event is not None:
                    self._pending.append(event)
        log.debug("an event listener on %r: no marker came back within %.1f s", self.tag_glob, timeout)
        return False

    def fire(self, tag: str, data: dict[str, Any]) -> None:
        """Fire an event on this listener's bus (it arrives here too when the glob matches)."""
        if self._sender is None:
            self._sender = EventSender(self.opts, self.name)
        self._sender.fire(tag, data)

    def close(self) -> None:
        self._sock.close()
        if self._sender is not None:
            self._sender.close()

    def __enter__(self) -> "EventListener":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_bus(pub_path: str, name: str) -> None:
    from .localipc import denied_message, probe

    problem = probe(pub_path)
    if problem is None:
        return
    kind, detail = problem
    if kind == "denied":
        raise EventBusNotRunning(denied_message(pub_path, f"the {name}"))
    if kind in ("missing", "refused"):
        raise EventBusNotRunning(
            f"the {name} event bus is not running (nothing listens on {pub_path}); start the {name}"
        )
    raise EventBusNotRunning(f"cannot reach the {name} event bus at {pub_path}: {detail}")
