"""A cap on the connections a ZeroMQ listening socket keeps: the master's request and publish ports.

Runs on the master's loop, as a task of :class:`briny.common.transport.ZmqServer`. ZeroMQ
accepts every TCP connection and gives each its own queues, so the number of connections is
what bounds the memory peers without a session can make the master hold (each holds at most
``ret_send_hwm`` unread replies, or ``pub_hwm`` unread publishes: ``docs/PROTOCOL.md``, "Frame
limits"). The socket's monitor
reports each accepted connection with its file descriptor, and each disconnection; a
connection accepted while ``limit`` are open is shut down at once (``shutdown(2)`` on its
descriptor, which ZeroMQ then closes as for any peer that hung up: its own descriptor is never
closed here), counted, and reported once a second. The peer's ZeroMQ reconnects later, as after
any lost connection, and gets in once there is room.

The monitor's queue is unbounded on the reading side, so ZeroMQ's I/O thread never waits for
this task. A descriptor is shut down only if it is still a TCP connection on the listening
port (a descriptor closed and reused before its event is read is left alone unless it is
another connection to that port, which its own event counts).
"""

from __future__ import annotations

import itertools
import logging
import socket

import zmq
import zmq.asyncio
from zmq.utils.monitor import parse_monitor_message

from .ratelog import LogThrottle

log = logging.getLogger(__name__)

_ids = itertools.count()


def _shut(fd: int, port: int) -> bool:
    """Shut down the TCP connection ``fd`` accepted on ``port`` (True), or leave it (False:
    not such a connection any more)."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError:
        return False
    try:
        if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
            return False
        if sock.getsockname()[1] != port:
            return False
        sock.getpeername()  # the listening socket has none (OSError)
        sock.shutdown(socket.SHUT_RDWR)
        return True
    except OSError:
        return False
    finally:
        sock.detach()  # the descriptor stays ZeroMQ's


class ConnectionCap:
    """At most ``limit`` connections to ``sock`` (bound to ``port``; ``key``: the config key that
    sets ``limit``, named in the warning): see the module docstring."""

    def __init__(
        self,
        ctx: zmq.asyncio.Context,
        sock: zmq.asyncio.Socket,
        port: int,
        limit: int,
        key: str = "ret_max_connections",
    ) -> None:
        self.port = port
        self.key = key
        self.limit = max(1, limit)
        self.open: set[int] = set()  # descriptors of the connections open now
        self.refused = 0  # connections shut down because ``limit`` were open
        self._warn = LogThrottle(log)
        addr = f"inproc://briny-conncap-{next(_ids)}"
        sock.monitor(addr, zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
        self._sock = sock
        self.events = ctx.socket(zmq.PAIR)
        self.events.setsockopt(zmq.RCVHWM, 0)  # never makes ZeroMQ's I/O thread wait
        self.events.setsockopt(zmq.LINGER, 0)
        self.events.connect(addr)

    def handle(self, event: int, fd: int) -> None:
        """One monitor event (loop)."""
        if event == zmq.EVENT_DISCONNECTED:
            self.open.discard(fd)
        elif event == zmq.EVENT_ACCEPTED:
            if fd in self.open or len(self.open) < self.limit:
                self.open.add(fd)
            elif _shut(fd, self.port):
                self.refused += 1
                self._warn.note(
                    "refused a connection to port %d: %d are open (%s)", self.port, len(self.open), self.key
                )

    async def run(self) -> None:
        """Read the monitor until cancelled (loop)."""
        while True:
            msg = parse_monitor_message(await self.events.recv_multipart())
            self.handle(int(msg["event"]), int(msg["value"]))

    def close(self) -> None:
        if not self._sock.closed:
            self._sock.disable_monitor()
        self.events.close()
