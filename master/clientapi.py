"""The operator IPC: the master's side (on its loop) and the client the CLIs use.

``sock_dir/master_client.ipc`` is a ZeroMQ ROUTER the master binds inside
``sock_dir`` (mode 0700, socket 0600: only the master's user reaches it).
Requests and replies are msgpack maps (``docs/PROTOCOL.md``, "Operator
IPC"): ``publish``, ``find_job``, ``minions``, ``keys_changed``. A request
may carry ``corr`` (any scalar); the reply echoes it, so a client never
mistakes a late reply for the answer to a newer request.

- :class:`ClientAPIServer` runs on the master's asyncio loop
  (``zmq.asyncio``); each request is handled in its own task, and the
  master's slow parts (targeting, key store reads) run in its workers.
- :class:`MasterClient` is synchronous (plain ``zmq``), for ``briny``,
  ``briny-run`` and ``briny-key``; it raises :class:`MasterNotRunning` with
  a message saying how to start the master when nobody listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import itertools
import logging
import os
import socket
from typing import Any

import msgpack
import zmq
import zmq.asyncio

from briny.common.exceptions import BrinyError
from briny.common.wire import MAX_FRAME

log = logging.getLogger(__name__)

SOCKET_NAME = "master_client.ipc"
DEFAULT_TIMEOUT = 30.0


class MasterNotRunning(BrinyError):
    """No master answers on the client socket."""


class MasterError(BrinyError):
    """The master answered with an error."""


def client_socket_path(opts: dict[str, Any]) -> str:
    return os.path.join(str(opts.get("sock_dir") or "/var/run/briny/master"), SOCKET_NAME)


def _pack(data: Any) -> bytes:
    return msgpack.packb(data, use_bin_type=True, default=str)


def _unpack(data: bytes) -> Any:
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, TypeError):
        return None


class ClientAPIServer:
    """The ROUTER on ``master_client.ipc``, serving a :class:`MasterServer` (loop)."""

    def __init__(self, opts: dict[str, Any], master: Any, ctx: zmq.asyncio.Context | None = None) -> None:
        self.opts = opts
        self.master = master
        self.path = client_socket_path(opts)
        if len(self.path.encode()) > 107:
            raise BrinyError(f"the path {self.path} is too long for an IPC socket; set a shorter sock_dir")
        self.ctx = ctx or zmq.asyncio.Context.instance()
        self.sock: zmq.asyncio.Socket | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def bind(self) -> None:
        folder = os.path.dirname(self.path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # a stale socket of a master that died
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

    async def serve(self) -> None:
        """Answer requests until cancelled (loop)."""
        if self.sock is None:
            self.bind()
        assert self.sock is not None
        while True:
            parts = await self.sock.recv_multipart()
            if len(parts) != 2:
                log.warning("operator IPC: dropped a request of %d parts (expected 2)", len(parts))
                continue
            task = asyncio.ensure_future(self._answer(parts[0], parts[1]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _answer(self, peer: bytes, body: bytes) -> None:
        request = _unpack(body)
        corr = request.get("corr") if isinstance(request, dict) else None
        try:
            reply = await self.handle(request)
        except Exception as exc:  # one bad request must not take the IPC down
            log.exception("operator IPC request failed")
            reply = {"error": f"the master failed on this request: {exc}"}
        if corr is not None:
            reply = {**reply, "corr": corr}
        if self.sock is not None:
            with contextlib.suppress(zmq.ZMQError):
                await self.sock.send_multipart([peer, _pack(reply)])

    async def handle(self, request: Any) -> dict[str, Any]:
        """The reply to one request map (loop)."""
        if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
            return {"error": "a request is a msgpack map with a 'cmd'"}
        cmd = request["cmd"]
        if cmd == "publish":
            return await self.master.publish(
                request.get("tgt", ""), request.get("tgt_type", "glob"), request.get("fun", ""),
                request.get("arg"), request.get("kwarg"), request.get("timeout"), request.get("user"),
                progress=request.get("progress") is True)
        if cmd == "find_job":
            return await self.master.find_job(request.get("jid"), request.get("minions"))
        if cmd == "minions":
            return await self.master.minions()
        if cmd == "keys_changed":
            return await self.master.keys_changed()
        return {"error": f"unknown command {cmd[:40]!r}; the master knows publish, find_job, "
                         "minions, keys_changed"}

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        with contextlib.suppress(OSError):
            os.unlink(self.path)


class MasterClient:
    """A synchronous client of the operator IPC (one DEALER socket)."""

    def __init__(self, opts: dict[str, Any], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.opts = opts
        self.path = client_socket_path(opts)
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._sock: zmq.Socket | None = None

    def check_running(self) -> None:
        """Raise MasterNotRunning unless something listens on the socket (no zmq needed)."""
        if not os.path.exists(self.path):
            raise MasterNotRunning(
                f"the master is not running (no socket at {self.path}); start it with "
                f"'briny-master -c {self.opts.get('conf_dir') or 'DIR'}'")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.settimeout(2)
            probe.connect(self.path)
        except PermissionError:
            raise MasterNotRunning(f"no permission to reach the master at {self.path}; run as the "
                                   "master's user") from None
        except OSError as exc:
            if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):
                raise MasterNotRunning(
                    f"the master is not running (nothing listens on {self.path}); start it with "
                    f"'briny-master -c {self.opts.get('conf_dir') or 'DIR'}'") from None
            raise MasterNotRunning(f"cannot reach the master at {self.path}: {exc}") from None
        finally:
            probe.close()

    def _socket(self) -> zmq.Socket:
        # every request: a master that stopped since the last one is reported at once, instead
        # of after the whole timeout (``briny`` asking find_job of a master gone mid-job)
        self.check_running()
        if self._sock is None:
            sock = zmq.Context.instance().socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(f"ipc://{self.path}")
            self._sock = sock
        return self._sock

    def request(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply; MasterError for an ``error`` reply."""
        sock = self._socket()
        corr = next(self._ids)
        sock.send(_pack({**payload, "corr": corr}))
        wait = self.timeout if timeout is None else timeout
        deadline_ms = int(wait * 1000)
        while True:
            if not sock.poll(deadline_ms):
                raise MasterNotRunning(f"the master did not answer within {wait:g} s "
                                       f"(socket {self.path}); is briny-master running?")
            reply = _unpack(sock.recv())
            if isinstance(reply, dict) and reply.get("corr") == corr:
                break
        reply.pop("corr", None)
        if "error" in reply:
            raise MasterError(str(reply["error"]))
        return reply

    def publish(self, tgt: Any, fun: str, arg: list[Any] | None = None, kwarg: dict[str, Any] | None = None,
                tgt_type: str = "glob", timeout: float | None = None, user: str | None = None,
                progress: bool = False) -> dict[str, Any]:
        """Start a job: ``{"jid", "minions"}`` (``jid`` is empty when nothing matched); with
        ``progress`` the minions send progress events of state runs."""
        request = {"cmd": "publish", "tgt": tgt, "tgt_type": tgt_type, "fun": fun,
                   "arg": list(arg or []), "kwarg": dict(kwarg or {}), "timeout": timeout,
                   "user": user or os.environ.get("SUDO_USER") or _user()}
        if progress:
            request["progress"] = True
        return self.request(request)

    def find_job(self, jid: str, minions: list[str]) -> dict[str, Any]:
        return self.request({"cmd": "find_job", "jid": jid, "minions": list(minions)})

    def minions(self) -> dict[str, Any]:
        return self.request({"cmd": "minions"})

    def keys_changed(self) -> dict[str, Any]:
        return self.request({"cmd": "keys_changed"})

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> "MasterClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return "root"
