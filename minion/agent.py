"""The minion's logic over a :class:`~briny.common.transport.ClientTransport`.

Owns, for one minion: its RSA identity (``pki_dir/minion.pem`` 0600 and
``minion.pub``, made on first start), the auth handshake and master key
pinning (``pki_dir/minion_master.pub``, ``master_finger``), the session
(key, master's publish-signing key, replay guard), heartbeats, reconnection
with jittered exponential backoff, publishes (verify, open, replay-check,
run), returns, and forwarding events to the master. The contract is
``docs/PROTOCOL.md``.

Where things run:

- **the asyncio loop** (one thread): everything in :class:`MinionAgent`
  whose name does not say otherwise — auth, the publish reader, the
  heartbeat, requests to the master, the event-bus forwarder, and sending
  each job's return once its worker is done;
- **job processes** (``multiprocessing: True``, the default, when the
  daemon gives a :class:`~briny.minion.launcher.Launcher`): each job runs
  in a process of its own, started by the launcher;
  :class:`~briny.minion.procjobs.ProcessJobs` relays its channel on the
  loop (requests to the master, events, pillar, the job registry);
- **job workers** (a ``ThreadPoolExecutor``): with ``multiprocessing:
  False`` :meth:`MinionAgent._work` runs one job through
  :class:`~briny.minion.executor.Executor`, each with its own loader, so
  dunders never leak between jobs. What a worker needs from the loop it
  reaches with ``asyncio.run_coroutine_threadsafe``: forwarding
  ``fire_event`` events (:meth:`_job_fire`), sending refreshed grains. In
  process mode the same pool runs the relay's blocking work (pillar from
  the master, refreshes);
- the event bus (``EventBus(opts, name="minion")``) republishes in its own
  thread; the loop subscribes to it and forwards every event to the master.
- local calls (``briny-call`` without ``--local``) arrive on the loop from
  :mod:`briny.minion.localapi` and run through :meth:`MinionAgent.start_local`,
  the same worker path as a publish.

A frame that does not parse, a publish not signed by the master's key, one
sealed with another key, a stale or replayed one, is logged and dropped;
the minion keeps serving. A ping without reply within ``auth_timeout``, or
an ``err`` reply, drops the session and the minion authenticates again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import random
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from briny.common import crypto, handshake, wire
from briny.common.event import stamp
from briny.common.exceptions import AuthError, ConfigError, WireError
from briny.common.ids import id_problem
from briny.common.transport import ClientTransport, topic_for
from briny.minion.executor import Executor, Job, JobResult, LocalPillar, MasterPillar
from briny.minion.jobregistry import JobRegistry

log = logging.getLogger(__name__)

DEFAULT_PING_INTERVAL = 10.0
DEFAULT_AUTH_TIMEOUT = 10.0
DEFAULT_WORKERS = 16
OUTBOX_MAX = 1000  # returns and events kept while there is no session
RECENT_JIDS = 1000  # publishes already taken (a master may hand a job again after a reconnect)

TransportFactory = Callable[[], ClientTransport]


# -- records ---------------------------------------------------------------------------------


@dataclass
class Session:
    """One authenticated connection: lives from an accepted auth until it is found dead."""

    transport: ClientTransport
    key: bytes
    sign_pub: bytes
    guard: wire.ReplayGuard = field(default_factory=wire.ReplayGuard)
    dead: asyncio.Event = field(default_factory=asyncio.Event)
    since: float = field(default_factory=time.monotonic)


@dataclass
class AuthOutcome:
    """What one auth attempt gave: ``accepted`` (with a session) or a reason and when to retry."""

    status: str  # accepted, pending, rejected, denied, no_reply, refused
    retry_after: float = 0.0
    session: Session | None = None


@dataclass
class Backoff:
    """Reconnect delays: doubling from ``min_ms`` to ``max_ms``, with random jitter of up to half
    the interval (upwards below the cap, downwards at it), always within [min_ms, max_ms].
    ``uniform(a, b)`` draws the jitter (tests pin it)."""

    min_ms: float
    max_ms: float
    attempt: int = 0
    uniform: Callable[[float, float], float] = field(default=random.uniform, repr=False)

    def next(self) -> float:
        lo, hi = max(1.0, float(self.min_ms)), max(1.0, float(self.max_ms), float(self.min_ms))
        base = min(hi, lo * (2 ** min(self.attempt, 32)))
        self.attempt += 1
        if base < hi:
            delay = min(hi, base + self.uniform(0, base / 2))
        else:
            delay = max(lo, hi - self.uniform(0, hi / 2))
        return delay / 1000.0

    def reset(self) -> None:
        self.attempt = 0


# -- the agent --------------------------------------------------------------------------------


class MinionAgent:
    """One minion: connect, authenticate, serve jobs, reconnect; until :meth:`stop`.

    ``transport_factory`` makes a fresh connection to the master (a
    ``ZmqClient`` in the daemon, ``MemoryHub.client`` in tests); one is used
    per auth attempt and closed when its session dies. ``grains`` are the
    host's grains (detected by the daemon at start; ``{}`` is fine in tests).
    """

    def __init__(
        self,
        opts: dict[str, Any],
        transport_factory: TransportFactory,
        *,
        grains: dict[str, Any] | None = None,
        event_bus: bool = True,
        workers: int | None = None,
        launcher: Any = None,
    ) -> None:
        problem = id_problem(opts.get("id"))
        if problem is not None:
            raise ConfigError(
                f"the minion id {opts.get('id')!r} cannot be used: {problem}; set 'id' in the minion config"
            )
        self.opts = opts
        self.id: str = opts["id"]
        self.topic = topic_for(self.id)
        self.factory = transport_factory
        self.grains: dict[str, Any] = dict(grains or {})
        self.ping_interval = _seconds(opts.get("ping_interval"), DEFAULT_PING_INTERVAL)
        self.auth_timeout = _seconds(opts.get("auth_timeout"), DEFAULT_AUTH_TIMEOUT)
        self.acceptance_wait = _seconds(opts.get("acceptance_wait_time"), 10.0)
        self.backoff = Backoff(float(opts.get("recon_default") or 1000), float(opts.get("recon_max") or 10000))
        self.shutdown_grace = _seconds(opts.get("shutdown_grace"), 5.0)
        self.pause: Callable[[float], Awaitable[None]] = self._sleep  # between attempts; tests record it
        self.use_bus = event_bus
        pki = Path(str(opts.get("pki_dir") or "."))
        self.pki_dir = pki
        self.master_pub_path = pki / "minion_master.pub"
        self.hash_type = str(opts.get("hash_type") or "sha256")  # of master_finger, as Salt's
        if opts.get("master_finger"):
            crypto.fingerprint("", self.hash_type)  # ConfigError now for a hash_type briny lacks
        self._priv = crypto.load_or_create_rsa(pki / "minion.pem", pki / "minion.pub")
        self.pub_pem = crypto.public_pem(self._priv)
        count = int(opts.get("process_count_max") or -1)
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers or (count if count > 0 else DEFAULT_WORKERS), thread_name_prefix="briny-job"
        )
        self.registry = JobRegistry()
        local = opts.get("file_client") == "local"
        pillar: Any = LocalPillar(cache=True) if local else MasterPillar(self._fetch_pillar)
        self.executor = Executor(
            opts,
            lambda: self.grains,
            pillar,
            self.registry,
            master=self.request_sync,
            refresh_pillar=self._refresh_pillar,
            refresh_grains=self._refresh_grains,
        )
        self.procs: Any = None
        if launcher is not None:  # multiprocessing: a process per job
            from briny.minion.procjobs import DaemonLinks, ProcessJobs

            links = DaemonLinks(
                opts,
                lambda: self.grains,
                pillar,
                self._request_when_up,
                self._job_event,
                self._refresh_pillar,
                self._refresh_grains,
                self.pool,
            )
            self.procs = ProcessJobs(links, self.registry, launcher)
        self.session: Session | None = None
        self.status = "starting"  # last auth status, for logs and tests
        self.connected = asyncio.Event()  # set while a session is up (tests wait on it)
        self._outbox: deque[tuple[str, dict[str, Any]]] = deque()
        self._jobs: dict[str, asyncio.Task[Any]] = {}
        self._recent: deque[str] = deque(maxlen=RECENT_JIDS)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._accepting = True
        self._bus: Any = None
        self.auth_count = 0

    # -- lifecycle (loop) ---------------------------------------------------------------------
    async def run(self) -> None:
        """Serve until :meth:`stop`; then let running jobs finish (up to ``shutdown_grace`` s)
        and send their returns."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        if self.use_bus:
            self._start_bus()
        try:
            while not self._stop.is_set():
                delay = await self._connect_once()
                if delay > 0 and not self._stop.is_set():
                    log.debug("next connection attempt in %.2f s", delay)
                    await self.pause(delay)
        finally:
            await self._finish()

    def stop(self) -> None:
        """Stop taking jobs and shut down (loop; from another thread use
        ``loop.call_soon_threadsafe(agent.stop)``)."""
        self._accepting = False
        if self._stop is not None:
            self._stop.set()

    async def _sleep(self, seconds: float) -> None:
        assert self._stop is not None
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _finish(self) -> None:
        self._accepting = False
        jobs = list(self._jobs.values())
        if jobs:
            log.info("waiting up to %.1f s for %d running job(s)", self.shutdown_grace, len(jobs))
            _, pending = await asyncio.wait(jobs, timeout=self.shutdown_grace)
            if pending:
                stopped = self.registry.stop_all(signal.SIGTERM)
                log.warning(
                    "stopping %d job(s) still running after the grace period: %s", len(stopped), ", ".join(stopped)
                )
                _, pending = await asyncio.wait(pending, timeout=1.0)
                if pending and self.procs is not None:
                    self.registry.stop_all(signal.SIGKILL)  # a job process that ignored SIGTERM
                    _, pending = await asyncio.wait(pending, timeout=2.0)
                for task in pending:
                    task.cancel()  # its thread is stuck in a system call; no return will come
        session = self.session
        if session is not None and not session.dead.is_set():
            await self._flush_outbox()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if session is not None:
            session.transport.close()
            self.session = None
        if self._bus is not None:
            self._bus.stop()
        if self.procs is not None:
            self.procs.close()
        self.pool.shutdown(wait=False, cancel_futures=True)
        if self._outbox:
            log.warning("%d return(s)/event(s) could not be sent before shutdown", len(self._outbox))

    # -- one connection (loop) -----------------------------------------------------------------
    async def _connect_once(self) -> float:
        """Authenticate on a fresh transport and serve until the session dies; the delay before
        the next attempt."""
        transport = self.factory()
        transport.subscribe(self.topic)  # before auth: a job published right after is not missed
        session: Session | None = None
        try:
            auth = asyncio.ensure_future(self._authenticate(transport))
            assert self._stop is not None
            stop = asyncio.ensure_future(self._stop.wait())
            await asyncio.wait([auth, stop], return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            if not auth.done():
                auth.cancel()
                await asyncio.gather(auth, return_exceptions=True)
                return 0.0
            outcome = auth.result()
            self.status = outcome.status
            if outcome.session is None:
                return outcome.retry_after
            session = outcome.session
            self.session = session
            self.backoff.reset()
            self.auth_count += 1
            self.connected.set()
            log.info("connected to the master as %s", self.id)
            await self._serve(session)
            return 0.0 if self._stop is not None and self._stop.is_set() else self.backoff.next()
        finally:
            self.connected.clear()
            if session is None or not (self._stop is not None and self._stop.is_set()):
                # on shutdown the session stays open until returns are flushed (_finish)
                if self.session is session:
                    self.session = None
                transport.close()

    async def _serve(self, session: Session) -> None:
        assert self._stop is not None
        tasks = [
            asyncio.ensure_future(self._read_publishes(session)),
            asyncio.ensure_future(self._heartbeat(session)),
            asyncio.ensure_future(self._after_auth(session)),
        ]
        stop = asyncio.ensure_future(self._stop.wait())
        dead = asyncio.ensure_future(session.dead.wait())
        try:
            await asyncio.wait([stop, dead], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks + [stop, dead]:
                task.cancel()
            await asyncio.gather(*tasks, stop, dead, return_exceptions=True)
        if session.dead.is_set():
            log.warning("lost the master; authenticating again")

    async def _after_auth(self, session: Session) -> None:
        """Grains first (the master fires ``salt/minion/<id>/start`` on them and hands over jobs
        it kept for this minion), then whatever waited in the outbox."""
        await self.request("grains", {"grains": self.grains, "opts": public_opts(self.opts)})
        await self._flush_outbox()

    # -- auth (loop) -------------------------------------------------------------------------------
    async def _authenticate(self, transport: ClientTransport) -> AuthOutcome:
        """One handshake (PROTOCOL.md, "Trust"): a hello, the master's challenge (its key checked
        against the pinned one and ``master_finger`` before anything is signed), the auth signed
        with this minion's key, the master's signed answer."""
        token = os.urandom(handshake.TOKEN_BYTES)
        try:
            raw = await transport.request(handshake.hello(self.id, token), self.auth_timeout)
            if raw is None:
                return self._no_reply()
            offer = handshake.read_challenge(wire.decode(raw), self.id, token)
            pinned = self._check_master(offer.master_pub)
            frame = handshake.auth_request(
                self.id, self._priv, self.pub_pem, token, offer.challenge, crypto.fingerprint(offer.master_pub)
            )
            raw = await transport.request(frame, self.auth_timeout)
            if raw is None:
                return self._no_reply()
            reply = handshake.read_auth_reply(wire.decode(raw), self.id, token, offer.challenge)
            if reply.master_pub != offer.master_pub:
                raise AuthError("the auth reply carries another master key than its challenge")
            session = self._open_session(reply, pinned)
        except WireError as exc:
            log.error("auth refused: %s", exc)
            return AuthOutcome("refused", self.backoff.next())
        if reply.status == "accepted":
            assert session is not None
            return AuthOutcome("accepted", 0.0, Session(transport, session[0], session[1]))
        if reply.status == "pending":
            log.info(
                "this minion's key is pending on the master; accept it there with "
                "`briny-key -a %s`; asking again in %.1f s",
                self.id,
                self.acceptance_wait,
            )
            return AuthOutcome("pending", self.acceptance_wait)
        wait = max(self.acceptance_wait, self.backoff.max_ms / 1000.0) * 3
        log.error(
            "the master has %s this minion's key; it runs nothing. Asking again in %.0f s "
            "(delete the key on the master with `briny-key -d %s` to start over)",
            reply.status,
            wait,
            self.id,
        )
        return AuthOutcome(reply.status, wait)

    def _no_reply(self) -> AuthOutcome:
        log.info("the master did not answer the auth request within %.1f s", self.auth_timeout)
        return AuthOutcome("no_reply", self.backoff.next())

    def _check_master(self, master_pub: str) -> bool:
        """AuthError unless ``master_pub`` is the pinned master key (when one is pinned) and has the
        fingerprint ``master_finger`` names (when set, with ``hash_type`` as Salt computes it);
        whether a key is pinned."""
        pinned = self._pinned_master()
        if pinned is not None and crypto.fingerprint(pinned) != crypto.fingerprint(master_pub):
            raise AuthError(
                f"the master's key (fingerprint {crypto.fingerprint(master_pub)}) is not the "
                f"pinned one in {self.master_pub_path}; if the master's key really changed, "
                f"remove that file"
            )
        wanted = str(self.opts.get("master_finger") or "")
        if wanted:
            finger = crypto.fingerprint(master_pub, self.hash_type)
            if not crypto.same_fingerprint(wanted, finger):
                raise AuthError(
                    f"the master's key fingerprint {finger} ({self.hash_type}) does not match master_finger {wanted}"
                )
        return pinned is not None

    def _open_session(self, reply: handshake.AuthReply, pinned: bool) -> tuple[bytes, bytes] | None:
        """(session key, publish signing key) of an accepted reply (pinning the master's key on
        the first one); None for any other status."""
        if reply.status != "accepted":
            return None
        key = crypto.rsa_decrypt(self._priv, reply.session_enc)
        if len(key) != crypto.SESSION_KEY_BYTES or len(reply.sign_pub) != 32:
            raise AuthError("the auth reply's session key or signing key has the wrong size")
        if not pinned:
            self._pin_master(reply.master_pub, crypto.fingerprint(reply.master_pub, self.hash_type))
        return key, reply.sign_pub

    def _pinned_master(self) -> str | None:
        try:
            return self.master_pub_path.read_text(encoding="ascii")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise AuthError(f"cannot read the pinned master key {self.master_pub_path}: {exc}") from None

    def _pin_master(self, pem: str, finger: str) -> None:
        self.pki_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.master_pub_path.with_name(f".minion_master.pub.{os.getpid()}.tmp")
        tmp.write_text(pem, encoding="ascii")
        os.replace(tmp, self.master_pub_path)
        log.info("pinned the master's key (fingerprint %s) in %s", finger, self.master_pub_path)

    # -- requests (loop) --------------------------------------------------------------------------
    async def request(self, cmd: str, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
        """One sealed request; the reply payload, or None when there is no session, no reply in
        time or an ``err`` reply (those two also mark the session dead)."""
        session = self.session
        if session is None or session.dead.is_set():
            return None
        env = wire.sealed("req", self.id, session.key, {**payload, "cmd": cmd})
        frame = await session.transport.request(env.encode(), timeout or self.auth_timeout)
        if frame is None:
            log.warning("the master did not answer %r within %.1f s", cmd, timeout or self.auth_timeout)
            session.dead.set()
            return None
        try:
            reply = wire.decode(frame)
            if reply.kind == "err":
                log.warning(
                    "the master answered %r with an error: %s; authenticating again",
                    cmd,
                    wire.clear_payload(reply).get("error"),
                )
                session.dead.set()
                return None
            if reply.kind != "rep" or reply.id != self.id:
                raise WireError(f"expected a rep for {self.id}, got {reply.kind} for {reply.id!r}")
            data = wire.open_reply(reply, session.key, env.nonce)  # the answer to THIS request
            session.guard.check(reply)
        except WireError as exc:
            log.warning("dropped the reply to %r: %s", cmd, exc)
            return None
        if not isinstance(data, dict):
            log.warning("dropped the reply to %r: not a map", cmd)
            return None
        if data.get("error"):
            log.warning("the master refused %r: %s", cmd, data["error"])
        return data

    async def deliver(self, cmd: str, payload: dict[str, Any]) -> bool:
        """Send a return or an event; kept in the outbox (and sent after the next auth) when the
        master cannot take it now."""
        reply = await self.request(cmd, payload)
        if reply is None:
            self._keep(cmd, payload)
            return False
        return True

    def _keep(self, cmd: str, payload: dict[str, Any]) -> None:
        """Keep a message for after the next auth; when full, events give way to returns."""
        if len(self._outbox) >= OUTBOX_MAX:
            victim = next((m for m in self._outbox if m[0] == "event"), None) if cmd == "ret" else None
            if victim is None:
                log.warning("%d messages wait for the master already; this %s is dropped", OUTBOX_MAX, cmd)
                return
            self._outbox.remove(victim)
        self._outbox.append((cmd, payload))
        log.info("%s kept for sending after the next auth (%d waiting)", cmd, len(self._outbox))

    async def _flush_outbox(self) -> None:
        """Send what waited, oldest first; an item leaves the outbox only once the master took it."""
        while self._outbox and self.session is not None and not self.session.dead.is_set():
            item = self._outbox[0]
            if await self.request(*item) is None:
                return
            if self._outbox and self._outbox[0] is item:
                self._outbox.popleft()

    async def _heartbeat(self, session: Session) -> None:
        while not session.dead.is_set():
            await asyncio.sleep(self.ping_interval)
            await self.request("ping", {})  # no reply or an err marks the session dead

    # -- publishes (loop) -----------------------------------------------------------------------
    async def _read_publishes(self, session: Session) -> None:
        while True:
            topic, frame = await session.transport.recv_publish()
            try:
                job = self._open_publish(session, topic, frame)
            except WireError as exc:
                log.warning("dropped a publish: %s", exc)
                continue
            if job is not None:
                self._start_job(job)

    def _open_publish(self, session: Session, topic: bytes, frame: bytes) -> Job | None:
        if topic != self.topic:
            raise WireError(f"topic {topic[:40]!r} is not this minion's")
        env = wire.decode(frame)
        if env.kind != "pub" or env.id != self.id:
            raise WireError(f"a {env.kind} frame for {env.id!r} on the publish channel")
        wire.verify(env, session.sign_pub)
        load = wire.open_sealed(env, session.key)
        session.guard.check(env)
        job = Job.from_publish(load)
        if not self._accepting:
            log.info("shutting down: job %s (%s) not taken", job.jid, job.fun)
            return None
        if job.jid in self._jobs or job.jid in self._recent:
            log.debug("job %s already taken; publish ignored", job.jid)
            return None
        return job

    def _start_job(self, job: Job) -> None:
        self._recent.append(job.jid)
        log.info("running job %s: %s", job.jid, job.fun)
        task = asyncio.ensure_future(self._run_job(job))
        self._jobs[job.jid] = task
        task.add_done_callback(lambda _t, jid=job.jid: self._jobs.pop(jid, None))

    def start_local(self, job: Job) -> "asyncio.Task[JobResult] | None":
        """Run a local call (``briny-call`` through :mod:`briny.minion.localapi`) like a publish:
        in a worker, tracked for shutdown; the task gives the result at once and the return goes
        to the master after it. None while shutting down."""
        if not self._accepting:
            return None
        log.info("running local call %s: %s", job.jid, job.fun)

        async def local() -> JobResult:
            result = await self._execute(job)
            # the master makes the job record for a minion's own call under a jid of its own
            # (Salt's "req"); ours goes along so a return sent twice stays one job
            self._spawn(self.deliver("ret", {**result.payload(), "jid": "req", "local_jid": job.jid}))
            return result

        task = asyncio.ensure_future(local())
        self._jobs[job.jid] = task
        task.add_done_callback(lambda _t, jid=job.jid: self._jobs.pop(jid, None))
        return task

    async def _run_job(self, job: Job) -> None:
        result = await self._execute(job)
        await self.deliver("ret", result.payload())

    async def _execute(self, job: Job) -> JobResult:
        """Run one job in a process or a worker thread and wait for its result (loop)."""
        assert self._loop is not None
        if self.procs is not None:
            result = await self.procs.run(job)
            log.info("job %s done (retcode %s)", job.jid, result.retcode)
            return result
        try:
            result = await self._loop.run_in_executor(self.pool, functools.partial(self._work, job))
        except BaseException as exc:  # the worker died (a stop signal landed outside the job)
            if isinstance(exc, asyncio.CancelledError):
                raise
            log.error("job %s ended without a result: %s", job.jid, exc)
            result = JobResult(
                job.jid,
                job.fun,
                job.fun_args(),
                f"ERROR: job ended without a result: {exc}",
                1,
                False,
                "nested",
                "exception",
            )
        log.info("job %s done (retcode %s)", job.jid, result.retcode)
        return result

    def _work(self, job: Job) -> JobResult:
        """Worker thread: run one job."""
        return self.executor.run(job, fire_event=self._job_fire(job.jid))

    def _job_fire(self, jid: str) -> Callable[[str, dict[str, Any]], None]:
        """The ``fire_event`` of one thread job's context: worker threads call it; the event goes to
        the master through the loop, carrying the job's jid and this minion's id."""

        def fire(tag: str, data: dict[str, Any]) -> None:
            self._from_worker(self.deliver("event", self._event_body(jid, tag, data)))

        return fire

    def _job_event(self, jid: str, tag: str, data: dict[str, Any]) -> None:
        """An event from a job process (loop): to the master, as :meth:`_job_fire` sends it."""
        self._spawn(self.deliver("event", self._event_body(jid, tag, data)))

    def _event_body(self, jid: str, tag: str, data: dict[str, Any]) -> dict[str, Any]:
        body = {**data, "id": self.id, "jid": jid}
        body.setdefault("_stamp", stamp())
        return {"tag": tag, "data": body}

    def _from_worker(self, coro: Any) -> None:
        """Worker thread: hand a coroutine to the loop without waiting for it."""
        loop = self._loop
        if loop is None or loop.is_closed():
            coro.close()
            return
        try:
            asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:
            coro.close()
            log.debug("the loop is gone; message dropped")

    # -- hooks for jobs (worker threads) ---------------------------------------------------------
    def _fetch_pillar(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Ask the master for this minion's pillar and wait for the answer."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return None
        future = asyncio.run_coroutine_threadsafe(self.request("pillar", payload), loop)
        try:
            return future.result(self.auth_timeout + 1)
        except (concurrent.futures.TimeoutError, RuntimeError) as exc:
            log.warning("no pillar from the master: %s", exc)
            return None

    def request_sync(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
        """Worker thread (never the loop): one request (``payload["cmd"]`` names it) through the
        loop, waiting up to ``timeout`` s (default ``auth_timeout``) for a session and the reply;
        the reply payload, or None (no session, no reply, the loop gone). The remote file
        client's channel (:mod:`briny.minion.remotefiles`)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return None
        cmd = str(payload.get("cmd", ""))
        wait = timeout or self.auth_timeout
        try:
            future = asyncio.run_coroutine_threadsafe(self._request_when_up(payload, timeout), loop)
        except RuntimeError:
            return None
        try:
            return future.result(2 * wait + 1)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError, RuntimeError) as exc:
            future.cancel()
            log.warning("no answer from the master to %r: %s", cmd, exc or type(exc).__name__)
            return None

    async def _request_when_up(self, payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
        """One request (``payload["cmd"]`` names it), waiting up to ``timeout`` s (default
        ``auth_timeout``) for a session first (loop): what a job's ``master`` channel does."""
        body = dict(payload)
        cmd = str(body.pop("cmd", ""))
        wait = timeout or self.auth_timeout
        if self.session is None:
            try:
                await asyncio.wait_for(self.connected.wait(), wait)
            except asyncio.TimeoutError:
                return None
        return await self.request(cmd, body, wait)

    def _refresh_pillar(self) -> bool:
        """Worker thread: forget the kept pillar; with a master, ask it again right away."""
        source = self.executor.pillar
        if isinstance(source, MasterPillar):
            return source.reload(self.opts)
        source.refresh()
        return True

    def _refresh_grains(self) -> bool:
        from briny.minion.grains import load_grains

        self.grains = load_grains(self.opts)
        self._from_worker(self.request("grains", {"grains": self.grains, "opts": public_opts(self.opts)}))
        self.executor.pillar.refresh()  # pillar depends on grains: the next job asks again
        return True

    # -- the local event bus (loop) ---------------------------------------------------------------
    def _start_bus(self) -> None:
        from briny.common.event import EventBus

        try:
            self._bus = EventBus(self.opts, name="minion").start_thread()
        except (OSError, ValueError, RuntimeError) as exc:
            log.error("the minion event bus did not start (%s); local events will not reach the master", exc)
            self._bus = None
            return
        self._spawn(self._forward_bus(self._bus.pub_path))

    async def _forward_bus(self, pub_path: str) -> None:
        import zmq
        import zmq.asyncio

        from briny.common.event import decode

        sock = zmq.asyncio.Context.instance().socket(zmq.SUB)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SUBSCRIBE, b"")
        sock.connect(f"ipc://{pub_path}")
        try:
            while True:
                event = decode(await sock.recv_multipart())
                if event is None:
                    continue
                tag, data = event
                data.setdefault("id", self.id)
                await self.deliver("event", {"tag": tag, "data": data})
        finally:
            sock.close()


# -- helpers ------------------------------------------------------------------------------------


def _seconds(value: Any, default: float) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return default


def public_opts(opts: dict[str, Any]) -> dict[str, Any]:
    """This minion's config as it tells the master (with its grains), so templates the master
    renders for it see ``opts`` as they would here: only the keys the master may take
    (:mod:`briny.common.reported`: no paths, module locations, sockets, keys or secrets)."""
    from briny.common import reported

    return reported.public_opts(opts)
