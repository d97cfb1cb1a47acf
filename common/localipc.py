"""Owner-only local IPC between a daemon and the commands run beside it.

Runs in the daemons (the server, on their asyncio loop) and in the CLIs
(the probe and a DEALER socket, synchronous). The master's operator API
(``master/clientapi.py``) and the minion's local API (``minion/localapi.py``)
are both an :class:`IpcServer` subclass that only says how to answer one
request (:meth:`IpcServer.handle`).

The socket is a ZeroMQ ROUTER bound inside ``sock_dir`` (folder 0700,
socket 0600: only the daemon's user reaches it), and every request is also
checked by the kernel's word on who sent it (``SO_PEERCRED``, which ZeroMQ
gives as the message's ``Peer-Address``): only the daemon's own uid and root
are answered, anyone else gets a "permission denied" reply, so loosened
modes (a shared ``sock_dir``, a umask) do not open the daemon to other
users. A command run by a user who cannot reach the socket says "permission
denied", naming the socket and the user (:func:`denied_message`), not
"not running". Requests and replies are
msgpack maps; a request may carry ``corr``, echoed in its reply. Each request
is answered in its own task, so a slow one never holds up the others, and a
request that raises gets an error reply instead of taking the socket down.

Every error answer of both daemons has one shape, made by :func:`error_reply`
and read by :func:`reply_error`: ``{"error": <kind>, "message": <text a user
can act on>}``. Kinds: ``usage`` (not a request this daemon knows),
``denied`` (a caller of another uid), ``exception`` (the daemon failed on
it), ``refused`` (the daemon answered the request with an error: a bad
target, a job it could not store); the minion's ``call`` replies also use
the executor's kinds (``not_found``, ``invocation``, ``execution``,
``killed``) with the job's fields beside them.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import pwd
import socket
from typing import TYPE_CHECKING, Any

import msgpack
import zmq

if TYPE_CHECKING:  # the server's loop; a CLI (a client) imports neither
    import asyncio

    import zmq.asyncio

from .exceptions import WireError
from .ipcpath import ipc_path
from .unpacking import MAX_FRAME
from .unpacking import unpack as _unpack

log = logging.getLogger(__name__)


def error_reply(kind: str, message: str) -> dict[str, Any]:
    """The one shape of an error answer on local IPC (see the module docstring)."""
    return {"error": kind, "message": message}


def reply_error(reply: Any) -> str | None:
    """The message of an error answer (:func:`error_reply`), or None when ``reply`` is not one."""
    if isinstance(reply, dict) and reply.get("error") is not None:
        return str(reply.get("message") or reply["error"])
    return None


def pack(data: Any) -> bytes:
    return msgpack.packb(data, use_bin_type=True, default=str)


def unpack(data: bytes) -> Any:
    """The map a request or reply holds, or None when it does not parse (within the wire's
    limits for a body: :func:`briny.common.unpacking.unpack`)."""
    try:
        return _unpack(data)
    except WireError:
        return None


def probe(path: str) -> tuple[str, str] | None:
    """None when something listens on ``path``; else (``missing``|``refused``|``denied``|
    ``error``, detail). Needs no ZeroMQ: a plain connect to the socket file. A socket in a
    folder this user may not enter is ``denied`` (not ``missing``: the daemon may well run)."""
    try:
        os.stat(path)
    except PermissionError:
        return "denied", path
    except (FileNotFoundError, NotADirectoryError):
        return "missing", path
    except OSError as exc:
        return "error", str(exc)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(2)
        sock.connect(path)
    except PermissionError:
        return "denied", path
    except OSError as exc:
        if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):
            return "refused", path
        return "error", str(exc)
    finally:
        sock.close()
    return None


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def denied_message(path: str, daemon: str) -> str:
    """What a command says when this user may not reach ``daemon``'s socket at ``path``."""
    uid = os.geteuid()
    owner = None
    with contextlib.suppress(OSError):
        owner = os.stat(os.path.dirname(path)).st_uid
    if owner == 0:
        who = f"as root (the user {daemon} runs as)"
    elif owner is not None:
        who = f"as {_user(owner)} (the user {daemon} runs as) or as root"
    else:
        who = f"as the user {daemon} runs as, or as root"
    return (
        f"permission denied: user {_user(uid)} (uid {uid}) may not use {daemon}'s socket {path}; run this command {who}"
    )


def peer_uid(frame: zmq.Frame) -> int | None:
    """The uid of the process that sent ``frame`` (``SO_PEERCRED``, as ZeroMQ reports it in
    the ``Peer-Address`` property of IPC messages: ``<address>:<uid>:<gid>:<pid>``), or None."""
    try:
        address = frame.get("Peer-Address")
    except (zmq.ZMQError, KeyError, AttributeError):
        return None
    parts = str(address or "").rsplit(":", 3)
    if len(parts) != 4 or not parts[1].isdigit():
        return None
    return int(parts[1])


def dealer(path: str) -> zmq.Socket[bytes]:
    """A synchronous DEALER connected to ``path``."""
    sock: zmq.Socket[bytes] = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"ipc://{path}")
    return sock


class IpcServer:
    """A ROUTER on ``path`` answering msgpack maps (loop). Subclasses define :meth:`handle`."""

    label = "local IPC"
    daemon = "the daemon"  # how error answers name the daemon

    def __init__(self, path: str, ctx: zmq.asyncio.Context | None = None) -> None:
        import zmq.asyncio

        self.path = ipc_path(path)
        self.ctx = ctx or zmq.asyncio.Context.instance()
        self.sock: zmq.asyncio.Socket | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    async def handle(self, request: Any) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def bind(self) -> None:
        folder = os.path.dirname(self.path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # a stale socket of a daemon that died
        sock = self.ctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 500)
        sock.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME)
        old = os.umask(0o077)
        try:
            sock.bind(f"ipc://{self.path}")
        finally:
            os.umask(old)
        with contextlib.suppress(OSError):
            os.chmod(self.path, 0o600)
        self.sock = sock
        log.info("%s on %s", self.label, self.path)

    async def serve(self) -> None:
        """Answer requests until cancelled (loop)."""
        if self.sock is None:
            self.bind()
        assert self.sock is not None
        import asyncio

        allowed = {os.geteuid(), 0}
        while True:
            parts = await self.sock.recv_multipart(copy=False)
            if len(parts) != 2:
                log.warning("%s: dropped a request of %d parts (expected 2)", self.label, len(parts))
                continue
            uid = peer_uid(parts[1])
            denied = None
            if uid not in allowed:
                denied = (
                    f"permission denied: {'an unknown user' if uid is None else f'uid {uid}'} may "
                    f"not use {self.label} on {self.path} (only uid {os.geteuid()} and root may)"
                )
                log.warning(
                    "%s: refused a request from %s",
                    self.label,
                    "a peer without credentials" if uid is None else f"uid {uid}",
                )
            task = asyncio.ensure_future(self._answer(parts[0].bytes, parts[1].bytes, denied))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _answer(self, peer: bytes, body: bytes, denied: str | None = None) -> None:
        request = unpack(body)
        corr = request.get("corr") if isinstance(request, dict) else None
        try:
            reply = error_reply("denied", denied) if denied is not None else await self.handle(request)
        except Exception as exc:  # one bad request must not take the IPC down
            log.exception("%s request failed", self.label)
            reply = error_reply("exception", f"{self.daemon} failed on this request: {exc}")
        if corr is not None:
            reply = {**reply, "corr": corr}
        if self.sock is not None:
            with contextlib.suppress(zmq.ZMQError):
                await self.sock.send_multipart([peer, pack(reply)])

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        with contextlib.suppress(OSError):
            os.unlink(self.path)
