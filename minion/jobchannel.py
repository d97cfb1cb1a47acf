"""The channel between the minion daemon and one job process (``multiprocessing: True``).

One ``AF_UNIX`` stream socketpair per job: the daemon keeps one end, the
job process gets the other from the launcher (:mod:`briny.minion.launcher`).
Frames are a 4-byte big-endian length and a msgpack map with ``op``
(``docs/PROTOCOL.md``, "Daemon and job process"). The job process never
talks to the master itself: every request, event and its return go through
this channel, and the daemon relays them.

- :class:`JobChannel` is the job process's end: blocking, thread-safe
  (a module may call from its own threads); ``call`` sends a request with an
  ``id`` and waits for the ``reply`` with that id; ``send`` is one-way.
- :func:`read_frame` / :func:`frame` are the daemon's end, on its asyncio
  loop (:mod:`briny.minion.procjobs`).
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import struct
import threading
from typing import Any

from briny.common import wire
from briny.common.exceptions import ChannelClosed, WireError

HEADER = struct.Struct(">I")
MAX_FRAME = 512 * 1024 * 1024  # a job's return can be large; the peer is this host's own daemon


def frame(message: dict[str, Any]) -> bytes:
    body = wire.pack(message)
    if len(body) > MAX_FRAME:
        raise WireError(f"a job channel frame of {len(body)} bytes is over {MAX_FRAME}")
    return HEADER.pack(len(body)) + body


def _decode(body: bytes) -> dict[str, Any]:
    message = wire.unpack(body)
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise WireError("a job channel frame is not a map with an 'op'")
    return message


async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message (daemon's end), or None at end of stream."""
    try:
        head = await reader.readexactly(HEADER.size)
        size = HEADER.unpack(head)[0]
        if size > MAX_FRAME:
            raise WireError(f"a job channel frame of {size} bytes is over {MAX_FRAME}")
        return _decode(await reader.readexactly(size))
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


class JobChannel:
    """The job process's end of its channel (blocking)."""

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(True)
        self.sock = sock
        self._send_lock = threading.Lock()
        self._recv_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._replies: dict[int, Any] = {}

    def _recv_exact(self, size: int) -> bytes:
        chunks: list[bytes] = []
        while size:
            chunk = self.sock.recv(min(size, 1 << 20))
            if not chunk:
                raise ChannelClosed("the minion daemon closed the job channel")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def recv(self) -> dict[str, Any]:
        size = HEADER.unpack(self._recv_exact(HEADER.size))[0]
        if size > MAX_FRAME:
            raise WireError(f"a job channel frame of {size} bytes is over {MAX_FRAME}")
        return _decode(self._recv_exact(size))

    def send(self, op: str, **fields: Any) -> None:
        data = frame({**fields, "op": op})
        with self._send_lock:
            try:
                self.sock.sendall(data)
            except OSError as exc:
                raise ChannelClosed(f"the minion daemon is gone: {exc}") from None

    def call(self, op: str, **fields: Any) -> Any:
        """Ask the daemon and wait for its answer (the reply's ``value``)."""
        ident = next(self._ids)
        self.send(op, id=ident, **fields)
        while True:
            with self._recv_lock:
                if ident in self._replies:
                    return self._replies.pop(ident)
                message = self.recv()
                if message.get("op") == "reply" and isinstance(message.get("id"), int):
                    if message["id"] == ident:
                        return message.get("value")
                    self._replies[message["id"]] = message.get("value")  # another thread's

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
