"""The local event bus: fire events, listen to them by tag glob.

Runs on a host with a daemon (the minion's bus, ``name="minion"``, and the
master's, ``name="master"``) and in any local process that fires or listens.
Two IPC sockets under ``sock_dir`` make the bus, owned by one
:class:`EventBus` (in the daemon, or in a test):

- ``<name>_event_pull.ipc``: processes that fire connect a PUSH socket and
  send; :func:`fire_event` does this and returns at once;
- ``<name>_event_pub.ipc``: listeners connect a SUB socket;
  :class:`EventListener` does this and filters by tag glob.

The bus republishes every event it pulls. Frames are ``[tag, msgpack(data)]``
(UTF-8 tag, so SUB prefix filtering works on the literal part of a glob);
the data of every event gets ``_stamp`` (ISO time, UTC) as Salt's does. A
frame that does not parse is dropped with a log line, and so is one past the
limits of :mod:`briny.common.unpacking` (a frame over ``MAX_FRAME`` is
refused by the socket, a tag over 4096 bytes is dropped); the bus keeps
serving.

When no bus is running, :func:`fire_event` drops the event after a short
linger (as ``salt-call --local`` does without a minion daemon): firing never
blocks a state run. The sockets are created owner-only (mode 0600 folder
entries under a 0700 ``sock_dir``).

Python API::

    from briny.common.event import EventListener, fire_event
    with EventListener(opts, "salt/state_result/*") as events:
        for tag, data in events.iter(timeout=10):
            print(tag, data["ret"]["result"])

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
from collections.abc import Iterator
from typing import Any

import msgpack
import zmq

from .exceptions import BrinyError, ConfigError, WireError
from .ipcpath import ipc_path
from .unpacking import MAX_FRAME, unpack

log = logging.getLogger(__name__)

DEFAULT_NAME = "minion"
MAX_TAG_BYTES = 4096  # a longer tag is not an event: dropped
_WILDCARDS = "*?["


def stamp() -> str:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None).isoformat()


def _paths(opts: dict[str, Any], name: str) -> tuple[str, str]:
    sock_dir = str(opts.get("sock_dir") or "/var/run/briny")
    return (os.path.join(sock_dir, f"{name}_event_pull.ipc"), os.path.join(sock_dir, f"{name}_event_pub.ipc"))


def encode(tag: str, data: dict[str, Any]) -> list[bytes]:
    payload = dict(data)
    payload.setdefault("_stamp", stamp())
    return [tag.encode("utf-8"), msgpack.packb(payload, use_bin_type=True, default=str)]


def decode(frames: list[bytes]) -> tuple[str, dict[str, Any]] | None:
    """(tag, data) of a frame pair, or None when it does not parse."""
    if len(frames) != 2:
        return None
    if len(frames[0]) > MAX_TAG_BYTES:
        return None
    try:
        tag = frames[0].decode("utf-8")
        data = unpack(frames[1])
    except (UnicodeDecodeError, WireError):
        return None
    if not isinstance(data, dict):
        return None
    return tag, data


def fire_event(
    opts: dict[str, Any], tag: str, data: dict[str, Any], *, name: str = DEFAULT_NAME, linger_ms: int = 200
) -> None:
    """Send one event to the bus; returns at once, never raises for a missing bus."""
    pull, _ = _paths(opts, name)
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
    sock = ctx.socket(zmq.PUSH)
    sock.setsockopt(zmq.LINGER, linger_ms)
    sock.setsockopt(zmq.SNDHWM, 10000)
    try:
        sock.connect(f"ipc://{ipc_path(pull)}")
        sock.send_multipart(encode(tag, data), flags=zmq.NOBLOCK)
    except (zmq.ZMQError, ConfigError) as exc:
        log.debug("event %s not sent: %s", tag, exc)
    finally:
        sock.close()


class EventSender:
    """A PUSH socket kept open for many events (a state run, a daemon).

    Firing never raises: when the socket cannot be opened (say ``sock_dir``
    makes a path longer than an IPC socket allows) the problem is logged once
    and events are dropped.
    """

    def __init__(self, opts: dict[str, Any], name: str = DEFAULT_NAME, linger_ms: int = 1000) -> None:
        pull, _ = _paths(opts, name)
        self._lock = threading.Lock()
        self._sock: zmq.Socket[bytes] | None = zmq.Context.instance().socket(zmq.PUSH)
        self._sock.setsockopt(zmq.LINGER, linger_ms)
        self._sock.setsockopt(zmq.SNDHWM, 100000)
        try:
            self._sock.connect(f"ipc://{ipc_path(pull)}")
        except (zmq.ZMQError, ConfigError) as exc:
            log.error("events will not be sent: %s", exc)
            self._sock.close()
            self._sock = None

    def fire(self, tag: str, data: dict[str, Any]) -> None:
        if self._sock is None:
            return
        with self._lock:
            try:
                self._sock.send_multipart(encode(tag, data), flags=zmq.NOBLOCK)
            except zmq.ZMQError as exc:
                log.debug("event %s not sent: %s", tag, exc)

    __call__ = fire

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()


class EventBus:
    """Owns the two IPC sockets and republishes what it pulls."""

    def __init__(self, opts: dict[str, Any], name: str = DEFAULT_NAME) -> None:
        self.pull_path, self.pub_path = _paths(opts, name)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    def run(self) -> None:
        sock_dir = os.path.dirname(self.pull_path)
        os.makedirs(sock_dir, mode=0o700, exist_ok=True)
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context.instance()
        pull, pub = ctx.socket(zmq.PULL), ctx.socket(zmq.PUB)
        pub.setsockopt(zmq.SNDHWM, 100000)
        pull.setsockopt(zmq.RCVHWM, 100000)
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
                frames = pull.recv_multipart()
                if decode(frames) is None:
                    log.warning("dropped an event frame that does not parse (%d parts)", len(frames))
                    continue
                pub.send_multipart(frames)
        finally:
            pull.close()
            pub.close()
            for path in (self.pull_path, self.pub_path):
                try:
                    os.unlink(path)
                except OSError:
                    pass

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
    """Events whose tag matches ``tag_glob`` (fnmatch), from now on."""

    def __init__(self, opts: dict[str, Any], tag_glob: str = "*", name: str = DEFAULT_NAME) -> None:
        _, pub_path = _paths(opts, name)
        self.tag_glob = tag_glob
        prefix = tag_glob
        for ch in _WILDCARDS:
            prefix = prefix.split(ch, 1)[0]
        self._sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.SUB)
        self._sock.setsockopt(zmq.LINGER, 0)
        self._sock.setsockopt(zmq.RCVHWM, 100000)
        self._sock.setsockopt(zmq.SUBSCRIBE, prefix.encode("utf-8"))
        self._sock.connect(f"ipc://{ipc_path(pub_path)}")

    def get_event(self, timeout: float | None = 5.0) -> tuple[str, dict[str, Any]] | None:
        """The next matching event, or None after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if wait is not None and wait <= 0 and not self._sock.poll(0):
                return None
            if not self._sock.poll(None if wait is None else int(wait * 1000)):
                return None
            event = decode(self._sock.recv_multipart())
            if event is not None and fnmatch.fnmatchcase(event[0], self.tag_glob):
                return event

    def iter(self, timeout: float | None = 5.0, count: int | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Matching events until ``count`` were seen or none came for ``timeout`` seconds."""
        seen = 0
        while count is None or seen < count:
            event = self.get_event(timeout)
            if event is None:
                return
            seen += 1
            yield event

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> "EventListener":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
