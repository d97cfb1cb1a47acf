"""A fleet of real ``briny-master`` / ``briny-minion`` processes on 127.0.0.1, for tests and benches.

:class:`Fleet` writes a master config and one config per minion under one
root folder (free ports from :func:`briny.common.transport.free_ports`,
short relative ``sock_dir`` so IPC paths stay under the 107-byte limit,
fast heartbeats and reconnects), starts the daemons as child processes
(the venv's console scripts, in the foreground so this process owns their
pids), runs the operator CLIs (``briny``, ``briny-key``, ``briny-run``)
with bounded timeouts, and stops everything it started by pid: SIGTERM,
then SIGKILL after a bound. Every wait is bounded and a timeout raises
:class:`FleetError` with the tails of the daemons' logs.

Used by ``tests/e2e/conftest.py`` and ``bench/fleet.py``; nothing here
imports pytest.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from briny.common.transport import free_ports

BIN = Path(sys.executable).parent
IPC_LIMIT = 107
STOP_WAIT = 10.0  # seconds between SIGTERM and SIGKILL
T = TypeVar("T")


class FleetError(AssertionError):
    """A fleet did not reach the state a test waited for (the message carries the log tails)."""


def script(name: str) -> list[str]:
    """The command line running one of briny's console scripts (the venv's, else ``python -c``)."""
    path = BIN / name
    if path.exists():
        return [str(path)]
    module = {
        "briny": "briny.master.opmain",
        "briny-master": "briny.master.daemon",
        "briny-minion": "briny.minion.daemon",
        "briny-key": "briny.master.keycli",
        "briny-run": "briny.master.runcli",
        "briny-swarm": "briny.minion.swarm",
        "briny-api": "briny.master.api.daemon",
    }[name]
    return [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main())"]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pss_kb(pid: int) -> int:
    """Proportional set size of ``pid`` in KiB (``/proc/<pid>/smaps_rollup``)."""
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    raise FleetError(f"no Pss line in /proc/{pid}/smaps_rollup")


def tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no file)"
    return "\n".join(text.splitlines()[-lines:])


def _popen(argv: list[str], cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=cwd
    )


@dataclass
class Daemon:
    """One daemon process this fleet started."""

    name: str
    conf_dir: Path
    root: Path
    log_file: Path
    console: Path
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None, f"{self.name} was never started"
        return self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tails(self, lines: int = 30) -> str:
        return (
            f"--- {self.name} log ({self.log_file}) ---\n{tail(self.log_file, lines)}\n"
            f"--- {self.name} console ---\n{tail(self.console, lines)}"
        )


@dataclass
class Result:
    """One finished CLI run."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    elapsed: float

    def json(self) -> Any:
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as exc:
            raise FleetError(
                f"{' '.join(self.args)} did not print JSON ({exc}):\n{self.stdout}\nstderr:\n{self.stderr}"
            ) from None


class Fleet:
    """A master and minions under ``root``; see the module docstring.

    ``grains`` maps a minion id to static grains written to its config;
    ``minion_env`` to extra environment variables of its process. A key
    given as None in ``master_opts``, ``minion_opts`` or :meth:`add_minion`
    is left out of the config file, so the daemon's default applies.
    """

    def __init__(
        self,
        root: Path,
        ids: Iterable[str],
        *,
        auto_accept: bool = False,
        grains: dict[str, dict[str, Any]] | None = None,
        master_opts: dict[str, Any] | None = None,
        minion_opts: dict[str, Any] | None = None,
        minion_env: dict[str, dict[str, str]] | None = None,
        log_level: str = "info",
    ) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._own_root: Path | None = None
        if len(str(self.root / "mx" / "s" / "master_event_pull.ipc")) > IPC_LIMIT - 12:
            # a deep temporary folder: keep IPC paths short with a root under /tmp
            self._own_root = Path(tempfile.mkdtemp(prefix="bf", dir="/tmp"))
            self.root = self._own_root
        self.ids = list(ids)
        self.ret_port, self.pub_port = free_ports(2)
        self.master_dir = self.root / "mx"
        self.master_conf = self.master_dir / "conf"
        self.master_conf.mkdir(parents=True, exist_ok=True)
        (self.root / "srv" / "salt").mkdir(parents=True, exist_ok=True)
        (self.root / "srv" / "pillar").mkdir(parents=True, exist_ok=True)
        self.master_opts: dict[str, Any] = {
            "root_dir": str(self.master_dir),
            "interface": "127.0.0.1",
            "ret_port": self.ret_port,
            "publish_port": self.pub_port,
            "pki_dir": "pki",
            "cachedir": "cache",
            "sock_dir": "s",
            "log_file": "master.log",
            "pidfile": "master.pid",
            "log_level": log_level,
            "auto_accept": auto_accept,
            "ping_interval": 1,
            "timeout": 5,
            "gather_job_timeout": 2,
            "file_roots": {"base": [str(self.root / "srv" / "salt")]},
            "pillar_roots": {"base": [str(self.root / "srv" / "pillar")]},
            **(master_opts or {}),
        }
        self.minion_base: dict[str, Any] = {
            "master": "127.0.0.1",
            "master_port": self.ret_port,
            "publish_port": self.pub_port,
            "pki_dir": "pki",
            "cachedir": "cache",
            "sock_dir": "s",
            "log_file": "minion.log",
            "pidfile": "minion.pid",
            "log_level": log_level,
            "ping_interval": 1,
            "auth_timeout": 2,
            "acceptance_wait_time": 0.5,
            "recon_default": 100,
            "recon_max": 500,
            "shutdown_grace": 5,
            **(minion_opts or {}),
        }
        self.grains = grains or {}
        self.minion_env = minion_env or {}
        self.master = Daemon(
            "master", self.master_conf, self.master_dir, self.master_dir / "master.log", self.master_dir / "console.log"
        )
        self.minions: dict[str, Daemon] = {}
        self._client: Any = None
        self.write_master()
        for minion_id in self.ids:
            self.add_minion(minion_id)

    # -- configs ------------------------------------------------------------------------------
    def write_master(self) -> None:
        """(Re)write the master config from :attr:`master_opts` (before starting the master)."""
        body = {k: v for k, v in self.master_opts.items() if v is not None}
        (self.master_conf / "master").write_text(yaml.safe_dump(body))

    _write_master = write_master

    def add_minion(self, minion_id: str, **opts: Any) -> Daemon:
        """Write the config of one more minion (not started)."""
        root = self.root / minion_id
        conf = root / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        body = {**self.minion_base, "id": minion_id, "root_dir": str(root), **opts}
        body = {k: v for k, v in body.items() if v is not None}
        if minion_id in self.grains:
            body["grains"] = self.grains[minion_id]
        (conf / "minion").write_text(yaml.safe_dump(body))
        daemon = Daemon(
            minion_id,
            conf,
            root,
            root / "minion.log",
            root / "console.log",
            env=dict(self.minion_env.get(minion_id, {})),
        )
        self.minions[minion_id] = daemon
        if minion_id not in self.ids:
            self.ids.append(minion_id)
        return daemon

    # -- processes ----------------------------------------------------------------------------
    def _spawn(self, daemon: Daemon, command: str) -> None:
        assert not daemon.running, f"{daemon.name} already runs"
        env = {**os.environ, **daemon.env}
        with open(daemon.console, "ab") as console:
            daemon.proc = subprocess.Popen(
                [*script(command), "-c", str(daemon.conf_dir)],
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=console,
                env=env,
                cwd=str(daemon.root),
            )

    def start_master(self, timeout: float = 30.0) -> None:
        """Start the master and wait until it answers on the operator IPC."""
        self._spawn(self.master, "briny-master")
        self.wait(self._master_answers, timeout, "the master to serve")

    def start_minion(self, minion_id: str) -> Daemon:
        daemon = self.minions[minion_id]
        self._spawn(daemon, "briny-minion")
        return daemon

    def start(self, accept: bool = True, timeout: float = 60.0) -> Fleet:
        """Start the master and every minion; with ``accept``, accept their keys and wait until
        every minion is connected."""
        self.start_master()
        for minion_id in self.ids:
            self.start_minion(minion_id)
        if accept:
            if not self.master_opts.get("auto_accept"):
                self.wait_keys("minions_pre", self.ids, timeout)
                res = self.key("-A", "-y")
                if res.returncode != 0:
                    raise FleetError(f"briny-key -A failed: {res.stderr}\n{self.logs()}")
            self.wait_connected(self.ids, timeout)
        return self

    def stop(self, daemon: Daemon, sig: int = signal.SIGTERM, timeout: float = STOP_WAIT) -> int | None:
        """Send ``sig`` to one daemon and wait for it (SIGKILL after ``timeout``); its exit status."""
        proc = daemon.proc
        if proc is None:
            return None
        if proc.poll() is None:
            try:
                proc.send_signal(sig)
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(STOP_WAIT)
            except ProcessLookupError:
                pass
        if daemon is self.master:
            self._close_client()
        return proc.returncode

    def stop_master(self, sig: int = signal.SIGTERM, timeout: float = STOP_WAIT) -> int | None:
        return self.stop(self.master, sig, timeout)

    def close(self) -> None:
        """Stop every process this fleet started, by pid: SIGTERM to all, then SIGKILL after a bound."""
        self._close_client()
        daemons = [d for d in [*self.minions.values(), self.master] if d.running]
        for daemon in daemons:
            assert daemon.proc is not None
            try:
                daemon.proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + STOP_WAIT
        for daemon in daemons:
            assert daemon.proc is not None
            try:
                daemon.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                daemon.proc.kill()
                daemon.proc.wait(STOP_WAIT)
        if self._own_root is not None:
            import shutil

            shutil.rmtree(self._own_root, ignore_errors=True)

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the operator CLIs --------------------------------------------------------------------
    def cli(self, name: str, *args: str, timeout: float = 60.0) -> Result:
        argv = [*script(name), "-c", str(self.master_conf), *args]
        start = time.monotonic()
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise FleetError(
                f"{name} {' '.join(args)} did not finish within {timeout} s (stdout: {exc.stdout!r})\n{self.logs()}"
            ) from None
        return Result([name, *args], done.returncode, done.stdout, done.stderr, time.monotonic() - start)

    def briny(self, *args: str, timeout: float = 60.0) -> Result:
        return self.cli("briny", *args, timeout=timeout)

    def key(self, *args: str, timeout: float = 60.0) -> Result:
        return self.cli("briny-key", *args, timeout=timeout)

    def run(self, *args: str, timeout: float = 60.0) -> Result:
        return self.cli("briny-run", *args, timeout=timeout)

    def popen_briny(self, *args: str) -> subprocess.Popen[str]:
        """``briny`` in the background (the caller waits for it with a bound)."""
        return _popen([*script("briny"), "-c", str(self.master_conf), *args])

    def popen_call(self, minion_id: str, *args: str) -> subprocess.Popen[str]:
        """``briny-call`` with ``minion_id``'s config in the background (through its daemon, or
        in the process when masterless; the caller waits for it with a bound)."""
        daemon = self.minions[minion_id]
        return _popen([*script("briny-call"), "-c", str(daemon.conf_dir), *args], cwd=daemon.root)

    @contextlib.contextmanager
    def listening(self, tag_glob: str, probe_tag: str) -> Iterator[Any]:
        """An ``EventListener`` on the master's bus for ``tag_glob``, proven subscribed: probes
        tagged ``probe_tag`` (which the glob must match) are fired until one arrives, so the next
        event it gives was fired after this returned (ZeroMQ drops what a subscriber missed)."""
        from briny.common.config import load_master_config
        from briny.common.event import EventListener, EventSender
        from tests.waiting import join_listener

        opts = load_master_config(str(self.master_conf))
        sender = EventSender(opts, name="master")
        try:
            with EventListener(opts, tag_glob, name="master") as listener:
                join_listener(listener, sender.fire, probe_tag)
                yield listener
        finally:
            sender.close()

    # -- state ----------------------------------------------------------------------------------
    def _client_obj(self) -> Any:
        if self._client is None:
            from briny.common.config import load_master_config
            from briny.master.clientapi import MasterClient

            self._client = MasterClient(load_master_config(str(self.master_conf)), timeout=5)
        return self._client

    def _close_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _master_answers(self) -> bool:
        if not self.master.running:
            raise FleetError(
                f"the master exited with {self.master.proc.returncode if self.master.proc else '?'}\n{self.logs()}"
            )
        from briny.common.exceptions import MasterError, MasterNotRunning

        try:
            self._client_obj().minions()
        except (MasterNotRunning, MasterError):
            self._close_client()
            return False
        return True

    def publish(self, tgt: str, fun: str, *arg: Any) -> str:
        """Start a job through the master's IPC (no CLI process, no waiting for returns); its jid."""
        return str(self._client_obj().publish(tgt, fun, list(arg))["jid"])

    def minions_state(self) -> dict[str, Any]:
        """The master's ``minions`` IPC answer: ``{"accepted": [...], "connected": [...]}``."""
        return dict(self._client_obj().minions())

    def keys(self) -> dict[str, list[str]]:
        res = self.key("-L", "--out", "json")
        if res.returncode != 0:
            raise FleetError(f"briny-key -L failed: {res.stderr}")
        return dict(res.json())

    def wait_keys(self, folder: str, ids: Iterable[str], timeout: float = 30.0) -> None:
        wanted = set(ids)
        self.wait(
            lambda: wanted <= set(self.keys().get(folder, [])),
            timeout,
            f"keys {sorted(wanted)} in {folder}",
            interval=0.2,
        )

    def wait_connected(self, ids: Iterable[str], timeout: float = 30.0) -> None:
        """Wait until the master has a live session with every minion in ``ids``.

        A minion restarted while the master kept its old session counts at once: use
        :meth:`wait_session` for it.
        """
        wanted = set(ids)
        self.wait(
            lambda: wanted <= set(self.minions_state()["connected"]), timeout, f"minions {sorted(wanted)} connected"
        )

    def sessions(self, minion_id: str) -> int:
        """How many sessions a minion made since its log began (its ``connected`` log lines;
        the minion must log at ``info``)."""
        daemon = self.minions[minion_id]
        try:
            text = daemon.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return 0
        return text.count(f"connected to the master as {minion_id}")

    def wait_session(self, minion_id: str, more_than: int, timeout: float = 30.0) -> None:
        """Wait until ``minion_id`` has made more than ``more_than`` sessions (see :meth:`sessions`)."""
        self.wait(lambda: self.sessions(minion_id) > more_than, timeout, f"a new session of {minion_id}")

    def lookup_jid(self, jid: str) -> dict[str, Any]:
        res = self.run("jobs.lookup_jid", jid, "--out", "json")
        if res.returncode != 0:
            raise FleetError(f"jobs.lookup_jid {jid} failed: {res.stderr}")
        data = res.json()
        return dict(data) if isinstance(data, dict) else {}

    def wait_returns(self, jid: str, ids: Iterable[str], timeout: float = 30.0) -> dict[str, Any]:
        """The job's returns once every minion in ``ids`` has one in the job cache."""
        wanted = set(ids)
        found: dict[str, Any] = {}

        def ready() -> bool:
            found.clear()
            found.update(self.lookup_jid(jid))
            return wanted <= set(found)

        self.wait(ready, timeout, f"returns of {sorted(wanted)} for job {jid}", interval=0.2)
        return found

    def wait(self, pred: Callable[[], T], timeout: float, what: str, interval: float = 0.1) -> T:
        """Poll ``pred`` until it is truthy; FleetError (with log tails) after ``timeout`` s."""
        from tests.waiting import wait_until

        return wait_until(pred, timeout, what, interval, detail=self.logs, error=FleetError)

    def logs(self, lines: int = 30) -> str:
        """The tails of every daemon's log file and console."""
        parts = [self.master.tails(lines)]
        parts += [d.tails(lines) for d in self.minions.values() if d.proc is not None]
        return "\n".join(parts)


class RawPeer:
    """A DEALER on a master's ret port speaking the wire protocol by hand (synchronous): the
    security tests' stand-in for a minion or an attacker. ``auth`` runs the whole handshake
    (``briny.common.handshake``) and keeps the session key and the signed auth frame it sent."""

    def __init__(self, port: int) -> None:
        import zmq

        self.sock = zmq.Context.instance().socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(f"tcp://127.0.0.1:{port}")
        self.session: bytes | None = None
        self.signed_auth = b""

    def ask(self, frame: bytes, timeout: float = 5.0) -> bytes | None:
        """Send one frame; the reply frame, or None when none came within ``timeout`` s."""
        corr = os.urandom(8)
        self.sock.send_multipart([corr, frame])
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if not self.sock.poll(int(left * 1000)):
                break
            parts = self.sock.recv_multipart()
            if len(parts) == 2 and parts[0] == corr:
                return parts[1]
        return None

    def auth(self, minion_id: str, key: Any) -> str:
        """The handshake as ``minion_id`` with RSA ``key``; the status the master answered."""
        from briny.common import crypto, handshake, wire

        token = os.urandom(handshake.TOKEN_BYTES)
        raw = self.ask(handshake.hello(minion_id, token), 10)
        if raw is None:
            raise FleetError("no challenge")
        offer = handshake.read_challenge(wire.decode(raw), minion_id, token)
        self.signed_auth = handshake.auth_request(
            minion_id, key, crypto.public_pem(key), token, offer.challenge, crypto.fingerprint(offer.master_pub)
        )
        raw = self.ask(self.signed_auth, 10)
        if raw is None:
            raise FleetError("no auth reply")
        reply = handshake.read_auth_reply(wire.decode(raw), minion_id, token, offer.challenge)
        self.session = crypto.rsa_decrypt(key, reply.session_enc) if reply.status == "accepted" else None
        return reply.status

    def request(self, minion_id: str, payload: dict[str, Any], timeout: float = 5.0) -> dict[str, Any] | None:
        """One sealed request with the session key: the reply payload (``{"error"}`` for an ``err``
        reply), or None when no reply came."""
        from briny.common import wire

        assert self.session is not None, "no session"
        env = wire.sealed("req", minion_id, self.session, payload)
        raw = self.ask(env.encode(), timeout)
        if raw is None:
            return None
        reply = wire.decode(raw)
        if reply.kind == "rep":
            return dict(wire.open_reply(reply, self.session, env.nonce))
        return dict(wire.clear_payload(reply))

    def close(self) -> None:
        self.sock.close()


def events_until(
    listener: Any, done: Callable[[list[tuple[str, dict[str, Any]]]], bool], timeout: float = 30.0
) -> list[tuple[str, dict[str, Any]]]:
    """Events from ``listener`` until ``done(events so far)`` holds; FleetError after ``timeout`` s.
    End on an event that must come after everything the test looks at (a later job's returns, a
    marker sent behind), so what did not come before it will not come at all."""
    got: list[tuple[str, dict[str, Any]]] = []
    deadline = time.monotonic() + timeout
    while not done(got):
        left = deadline - time.monotonic()
        event = listener.get_event(left) if left > 0 else None
        if event is None:
            raise FleetError(f"the events looked for did not come within {timeout:g} s; got {[t for t, _ in got]}")
        got.append(event)
    return got


def returned(jid: str, ids: Iterable[str]) -> Callable[[list[tuple[str, dict[str, Any]]]], bool]:
    """For :func:`events_until`: the return events of job ``jid`` from every minion in ``ids`` came."""
    wanted = {f"salt/job/{jid}/ret/{minion_id}" for minion_id in ids}
    return lambda got: wanted <= {tag for tag, _ in got}


def jid_from(text: str) -> str:
    """The jid in ``--async`` (``Executed command with job ID: J``) or ``-v`` output."""
    for word in text.replace(":", " ").split():
        if len(word) == 20 and word.isdigit():
            return word
    raise FleetError(f"no jid in {text!r}")
