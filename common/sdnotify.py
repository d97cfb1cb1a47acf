"""systemd readiness notification (``sd_notify``), without a dependency.

Runs in the daemons (``briny-master``, ``briny-minion``) on their loop. Under a
``Type=notify`` unit systemd sets ``NOTIFY_SOCKET`` to a unix datagram socket
(a path, or ``@name`` in the abstract namespace); a daemon sends ``READY=1``
once it serves and ``STOPPING=1`` when it starts shutting down, each as one
datagram of ``KEY=VALUE`` lines. Without ``NOTIFY_SOCKET`` every call is a
no-op, so the daemons behave the same outside systemd.

:func:`take_socket` reads the variable once and removes it from the
environment, so the commands jobs run (a ``cmd.run`` starting another
notify-aware program) never talk to the daemon's unit.
"""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger(__name__)

_address: str | None = None
_taken = False


def take_socket() -> str | None:
    """The notify socket's address (``\\0``-prefixed for an abstract one), read from
    ``NOTIFY_SOCKET`` on the first call and removed from the environment; None without one."""
    global _address, _taken
    if not _taken:
        _taken = True
        raw = os.environ.pop("NOTIFY_SOCKET", "")
        if raw.startswith("@"):
            _address = "\0" + raw[1:]
        elif raw.startswith("/"):
            _address = raw
        elif raw:
            log.warning("NOTIFY_SOCKET %r is neither a path nor an abstract socket; not notifying systemd", raw)
    return _address


def notify(*lines: str) -> bool:
    """Send ``lines`` (``READY=1``, ``STATUS=...``) to systemd as one datagram. True when sent;
    False without a notify socket, or when sending failed (logged: readiness is best effort,
    a daemon keeps serving)."""
    address = take_socket()
    if address is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.connect(address)
            sock.sendall("\n".join(lines).encode("utf-8"))
    except OSError as exc:
        log.warning("could not notify systemd (%s): %s", address.lstrip("\0"), exc)
        return False
    return True


def ready(status: str) -> bool:
    """Tell systemd the daemon serves (``READY=1``), with a one-line ``STATUS``."""
    return notify("READY=1", f"STATUS={status}")


def stopping(status: str = "shutting down") -> bool:
    """Tell systemd the daemon is shutting down (``STOPPING=1``)."""
    return notify("STOPPING=1", f"STATUS={status}")
