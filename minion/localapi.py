"""The minion's local IPC: ``briny-call`` (without ``--local``) runs a function through the daemon.

``sock_dir/minion_client.ipc`` is a ZeroMQ ROUTER the minion daemon binds
inside ``sock_dir`` (mode 0700, socket 0600: only the minion's user reaches
it). Requests and replies are msgpack maps, as on the master's operator IPC
(``docs/PROTOCOL.md``, "Minion local IPC"); a request may carry ``corr``,
echoed in the reply.

``{"cmd": "call", "fun", "arg", "kwarg"}`` runs ``fun`` as a local job
through the same path as a publish (:meth:`MinionAgent.start_local`: a
fresh jid, the executor in a job process (a worker thread with
``multiprocessing: False``), the master's pillar, the remote file client,
``fire_event`` events to the master, the one-state-run rule,
the return sent to the master). For ``state.apply``/``state.highstate``/
``state.sls`` it first sends the master a ``compile`` request and attaches
the reply's ``compiled`` (``null``, or no answer: the minion compiles
itself). The reply is ``{"jid", "return", "retcode", "out", "error",
"message"}`` (``error``: None or the executor's kind, e.g. ``not_found``;
``message``: what ``briny-call`` prints on stderr for it).

``{"cmd": "control", "kind": "schedule"|"beacons", "action", "args"}`` is
one ``schedule.*`` / ``beacons.*`` action on the daemon's running schedule
or beacons (:meth:`ScheduleRunner.control`, :meth:`BeaconRunner.control`),
answered at once on the loop: ``{"return": <the daemon's answer>}``. It is
how a call that runs outside the daemon (``briny-call --local``,
``file_client: local``) reaches them: :func:`daemon_control` is that
call's ``__job__.schedule`` / ``__job__.beacons``, as Salt's ``salt-call
--local`` reaches its running minion over the event bus.

- :class:`LocalAPIServer` runs on the agent's asyncio loop (``zmq.asyncio``);
  each request is handled in its own task; the job itself runs as the
  agent's other jobs do (a process of its own, or its worker pool).
- :class:`LocalClient` is synchronous (plain ``zmq``), for ``briny-call``;
  it raises :class:`MinionNotRunning` when no daemon listens.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from typing import Any

import zmq
import zmq.asyncio

from briny.common.exceptions import BrinyError, MinionNotRunning, WireError
from briny.common.jid import gen_jid
from briny.common.localipc import IpcServer, dealer, denied_message, error_reply, pack, probe, reply_error, unpack
from briny.minion.executor import COMPILED_FUNS, Job

log = logging.getLogger(__name__)

SOCKET_NAME = "minion_client.ipc"
COMPILE_TIMEOUT = 30.0  # seconds the minion waits for the master's compile (a big tree)
PROBE_EVERY = 1.0  # seconds between checks that the daemon is still there
CONTROLS = ("schedule", "beacons")  # what ``control`` reaches in the daemon
CONTROL_WAIT = 30.0  # seconds a ``control`` request waits for the daemon (it answers at once)


def socket_path(opts: dict[str, Any]) -> str:
    return os.path.join(str(opts.get("sock_dir") or "/var/run/briny/minion"), SOCKET_NAME)


class LocalAPIServer(IpcServer):
    """The ROUTER on ``minion_client.ipc``, serving one :class:`MinionAgent` (loop)."""

    label = "local calls (briny-call)"
    daemon = "the minion"

    def __init__(self, opts: dict[str, Any], agent: Any, ctx: zmq.asyncio.Context | None = None) -> None:
        super().__init__(socket_path(opts), ctx)
        self.opts = opts
        self.agent = agent

    async def handle(self, request: Any) -> dict[str, Any]:
        """The reply to one request map (loop)."""
        if isinstance(request, dict) and request.get("cmd") == "control":
            return self._control(request)
        if not isinstance(request, dict) or request.get("cmd") != "call":
            return error_reply("usage", "a request is a msgpack map with 'cmd': 'call' or 'control'")
        load = {
            "jid": gen_jid(),
            "fun": request.get("fun"),
            "arg": request.get("arg"),
            "kwarg": request.get("kwarg"),
            "tgt": "salt-call",
        }
        try:
            Job.from_publish(load)  # checks fun, arg and kwarg before asking the master anything
        except WireError as exc:
            return error_reply("usage", str(exc))
        if load["fun"] in COMPILED_FUNS and self.opts.get("file_client") != "local":
            load["compiled"] = await self._compiled(load)
        job = Job.from_publish(load)
        task = self.agent.start_local(job)
        if task is None:
            return {**error_reply("usage", "the minion is shutting down; it takes no new calls"), "jid": job.jid}
        result = await task
        message = None
        if result.error is not None:
            error = result.exception
            message = (
                str(result.ret)
                if result.error == "not_found"
                else f"Error running '{job.fun}': {error if isinstance(error, BrinyError) else result.ret}"
            )
        return {
            "jid": job.jid,
            "return": result.ret,
            "retcode": result.retcode,
            "out": result.out,
            "error": result.error,
            "message": message,
        }

    def _control(self, request: dict[str, Any]) -> dict[str, Any]:
        """One action on the daemon's running schedule or beacons (loop)."""
        kind, action, args = request.get("kind"), request.get("action"), request.get("args")
        if kind not in CONTROLS or not isinstance(action, str) or not isinstance(args, dict):
            return error_reply(
                "usage", "a control request is {'cmd': 'control', 'kind': 'schedule'|'beacons', 'action', 'args': {}}"
            )
        runner = self.agent.scheduler if kind == "schedule" else self.agent.beacons
        return {"return": runner.control(action, args)}

    async def _compiled(self, load: dict[str, Any]) -> Any:
        """The master's ``compiled`` for this minion's state call, or None (the minion compiles
        itself: no session in time, no answer, an error, or the master says so)."""
        agent = self.agent
        if agent.session is None:
            try:
                await asyncio.wait_for(agent.connected.wait(), agent.auth_timeout)
            except asyncio.TimeoutError:
                log.warning("no master session for call %s; compiling here", load["jid"])
                return None
        reply = await agent.request(
            "compile", {k: load[k] for k in ("fun", "arg", "kwarg")}, max(COMPILE_TIMEOUT, agent.auth_timeout)
        )
        if not isinstance(reply, dict) or "compiled" not in reply:
            log.info("no compiled states from the master for call %s; compiling here", load["jid"])
            return None
        return reply["compiled"]


class LocalClient:
    """A synchronous client of the minion's local IPC (one DEALER socket), for ``briny-call``."""

    def __init__(self, opts: dict[str, Any]) -> None:
        self.opts = opts
        self.path = socket_path(opts)
        self._sock: zmq.Socket[bytes] | None = None

    def check_running(self) -> None:
        """Raise MinionNotRunning unless something listens on the socket."""
        problem = probe(self.path)
        if problem is None:
            return
        kind, detail = problem
        if kind in ("missing", "refused"):
            raise MinionNotRunning(
                f"no briny-minion is running for this config (sock_dir "
                f"{os.path.dirname(self.path)}); start it, or use --local"
            )
        if kind == "denied":
            raise MinionNotRunning(f"{denied_message(self.path, 'the minion')}, or use --local")
        raise MinionNotRunning(f"cannot reach the minion at {self.path}: {detail}")

    def call(self, fun: str, arg: list[Any], kwarg: dict[str, Any]) -> dict[str, Any]:
        """Run ``fun`` through the daemon and wait for its reply, however long the job takes;
        MinionNotRunning when no daemon listens, or it stops before answering."""
        return self._exchange({"cmd": "call", "fun": fun, "arg": arg, "kwarg": kwarg}, f"'{fun}' finished")

    def control(self, kind: str, action: str, args: dict[str, Any]) -> dict[str, Any]:
        """One ``kind.action`` (``schedule`` or ``beacons``) on the daemon's running ones: its
        reply (``return``: the daemon's answer); MinionNotRunning when no daemon listens."""
        request = {"cmd": "control", "kind": kind, "action": action, "args": args}
        return self._exchange(request, f"answering {kind}.{action}", CONTROL_WAIT)

    def _exchange(self, request: dict[str, Any], what: str, wait: float | None = None) -> dict[str, Any]:
        """Send ``request`` and wait for its reply while the daemon lives (``what``: what it
        stopped before, for the error), at most ``wait`` s (None: no limit)."""
        self.check_running()
        sock = self._sock = dealer(self.path)
        deadline = None if wait is None else time.monotonic() + wait
        step = PROBE_EVERY if wait is None else min(PROBE_EVERY, wait)
        try:
            corr = os.urandom(8).hex()
            sock.send(pack({**request, "corr": corr}))
            while True:
                if deadline is not None and time.monotonic() >= deadline:
                    raise MinionNotRunning(f"the minion gave no answer within {wait:g} s (socket {self.path})")
                if not sock.poll(int(step * 1000)):
                    try:
                        self.check_running()
                    except MinionNotRunning:
                        raise MinionNotRunning(f"the minion stopped before {what} (socket {self.path})") from None
                    continue
                reply = unpack(sock.recv())
                if isinstance(reply, dict) and reply.get("corr") == corr:
                    reply.pop("corr", None)
                    return reply
        finally:
            self.close()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def daemon_control(opts: dict[str, Any], kind: str) -> Callable[[str, dict[str, Any]], Any]:
    """``__job__.schedule`` / ``__job__.beacons`` (``kind``) of a call run outside the daemon: each
    action asks the minion daemon of this config over its local socket; None (no running schedule
    or beacons) when none runs or it answers with an error (logged)."""

    def ask(action: str, args: dict[str, Any]) -> Any:
        try:
            reply = LocalClient(opts).control(kind, action, args)
        except MinionNotRunning as exc:
            log.debug("%s.%s: no minion daemon to ask: %s", kind, action, exc)
            return None
        problem = reply_error(reply)
        if problem is not None:
            log.warning("%s.%s: the minion daemon answered with an error: %s", kind, action, problem)
            return None
        return reply.get("return")

    return ask
