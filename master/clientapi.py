"""The operator IPC: the master's side (on its loop) and the client the CLIs use.

``sock_dir/master_client.ipc`` is a ZeroMQ ROUTER the master binds inside
``sock_dir`` (mode 0700, socket 0600: only the master's user reaches it).
Requests and replies are msgpack maps (``docs/PROTOCOL.md``, "Operator
IPC"): ``publish``, ``find_job``, ``minions``. A request
may carry ``corr`` (any scalar); the reply echoes it, so a client never
mistakes a late reply for the answer to a newer request.

- :class:`ClientAPIServer` runs on the master's asyncio loop
  (``zmq.asyncio``); each request is handled in its own task, and the
  master's slow parts (targeting, key store reads) run in its workers.
- :class:`MasterClient` is synchronous (plain ``zmq``), for ``briny``,
  ``briny-run`` and ``briny-key``; it raises :class:`MasterNotRunning` with
  a message saying how to start the master when nobody listens, or, for a
  user who may not reach the socket, "permission denied" naming the socket
  and the user.
"""

from __future__ import annotations

import itertools
import logging
import os
from typing import TYPE_CHECKING, Any

import zmq

from briny.common.exceptions import MasterError, MasterNotRunning, Unauthorized
from briny.common.localipc import IpcServer, dealer, denied_message, error_reply, pack, probe, reply_error, unpack

if TYPE_CHECKING:
    import zmq.asyncio

    from .server import MasterServer

log = logging.getLogger(__name__)

SOCKET_NAME = "master_client.ipc"
DEFAULT_TIMEOUT = 30.0


def client_socket_path(opts: dict[str, Any]) -> str:
    return os.path.join(str(opts.get("sock_dir") or "/var/run/briny/master"), SOCKET_NAME)


class ClientAPIServer(IpcServer):
    """The ROUTER on ``master_client.ipc``, serving a :class:`MasterServer` (loop)."""

    label = "operator IPC"
    daemon = "the master"

    def __init__(self, opts: dict[str, Any], master: MasterServer, ctx: zmq.asyncio.Context | None = None) -> None:
        super().__init__(client_socket_path(opts), ctx)
        self.opts = opts
        self.master = master

    async def handle(self, request: Any) -> dict[str, Any]:
        """The reply to one request map (loop)."""
        if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
            return error_reply("usage", "a request is a msgpack map with a 'cmd'")
        return _as_reply(await self._answer_cmd(request["cmd"], request))

    async def _answer_cmd(self, cmd: str, request: dict[str, Any]) -> dict[str, Any]:
        if cmd == "publish":
            return await self.master.publisher.publish(
                request.get("tgt", ""),
                request.get("tgt_type", "glob"),
                request.get("fun", ""),
                request.get("arg"),
                request.get("kwarg"),
                request.get("timeout"),
                request.get("user"),
                progress=request.get("progress") is True,
                acl=request["acl"] if isinstance(request.get("acl"), list) else None,
            )
        if cmd == "find_job":
            return await self.master.publisher.find_job(request.get("jid"), request.get("minions"))
        if cmd == "minions":
            return await self.master.minions()
        return error_reply("usage", f"unknown command {cmd[:40]!r}; the master knows publish, find_job, minions")


def _as_reply(answer: dict[str, Any]) -> dict[str, Any]:
    """The master's answer as the IPC's reply: its ``{"error": text}`` refusals (a bad target, a
    job it could not store) in the one error shape (:func:`briny.common.localipc.error_reply`)."""
    if "error" in answer and "message" not in answer:
        return error_reply("refused", str(answer["error"]))
    return answer


class MasterClient:
    """A synchronous client of the operator IPC (one DEALER socket)."""

    def __init__(self, opts: dict[str, Any], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.opts = opts
        self.path = client_socket_path(opts)
        self.timeout = timeout
        self._ids = itertools.count(1)
        self._sock: zmq.Socket[bytes] | None = None

    def check_running(self) -> None:
        """Raise MasterNotRunning unless something listens on the socket (no zmq needed)."""
        problem = probe(self.path)
        if problem is None:
            return
        kind, detail = problem
        start = f"start it with 'briny-master -c {self.opts.get('conf_dir') or 'DIR'}'"
        if kind == "missing":
            raise MasterNotRunning(f"the master is not running (no socket at {self.path}); {start}")
        if kind == "refused":
            raise MasterNotRunning(f"the master is not running (nothing listens on {self.path}); {start}")
        if kind == "denied":
            raise MasterNotRunning(denied_message(self.path, "the master"))
        raise MasterNotRunning(f"cannot reach the master at {self.path}: {detail}")

    def _socket(self) -> zmq.Socket[bytes]:
        # every request: a master that stopped since the last one is reported at once, instead
        # of after the whole timeout (``briny`` asking find_job of a master gone mid-job)
        self.check_running()
        if self._sock is None:
            self._sock = dealer(self.path)
        return self._sock

    def request(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply; MasterError for an ``error`` reply."""
        sock = self._socket()
        corr = next(self._ids)
        sock.send(pack({**payload, "corr": corr}))
        wait = self.timeout if timeout is None else timeout
        deadline_ms = int(wait * 1000)
        while True:
            if not sock.poll(deadline_ms):
                raise MasterNotRunning(
                    f"the master did not answer within {wait:g} s (socket {self.path}); is briny-master running?"
                )
            reply = unpack(sock.recv())
            if isinstance(reply, dict) and reply.get("corr") == corr:
                break
        reply.pop("corr", None)
        error = reply_error(reply)
        if error is not None:
            raise Unauthorized(error) if reply.get("error") == "unauthorized" else MasterError(error)
        return reply

    def publish(
        self,
        tgt: Any,
        fun: str,
        arg: list[Any] | None = None,
        kwarg: dict[str, Any] | None = None,
        tgt_type: str = "glob",
        timeout: float | None = None,
        user: str | None = None,
        progress: bool = False,
        acl: list[Any] | None = None,
    ) -> dict[str, Any]:
        """Start a job: ``{"jid", "minions"}`` (``jid`` is empty when nothing matched); with
        ``progress`` the minions send progress events of state runs; with ``acl`` (a user's
        ``external_auth`` entries) the master publishes only if they allow ``fun`` on every
        matched minion, else :class:`~briny.common.exceptions.Unauthorized`."""
        request = {
            "cmd": "publish",
            "tgt": tgt,
            "tgt_type": tgt_type,
            "fun": fun,
            "arg": list(arg or []),
            "kwarg": dict(kwarg or {}),
            "timeout": timeout,
            "user": user or os.environ.get("SUDO_USER") or current_user(),
        }
        if progress:
            request["progress"] = True
        if acl is not None:
            request["acl"] = acl
        return self.request(request)

    def find_job(self, jid: str, minions: list[str]) -> dict[str, Any]:
        return self.request({"cmd": "find_job", "jid": jid, "minions": list(minions)})

    def minions(self) -> dict[str, Any]:
        return self.request({"cmd": "minions"})

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> "MasterClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def current_user() -> str:
    """The name of the user this process runs as ("root" when the system cannot say)."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return "root"
