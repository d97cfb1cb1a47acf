"""The master's protocol core over a :class:`ServerTransport`: frames, auth, sessions, requests,
publishes.

Owns what ``docs/PROTOCOL.md`` asks of the master on the wire: the auth
handshake (its decisions are :class:`briny.master.auth.MasterAuth`'s) and
the per-minion session keys (:class:`briny.master.sessions.SessionTable`),
every ``req`` a minion sends (dispatched to the handlers registered with
:meth:`MasterServer.register_handler`: ``ping``/``grains``/``ret``/``event``
are :mod:`briny.master.handlers`', the daemon registers the pillar, file
server and compile subsystems it builds), and keeping the sessions in step
with the key store (:mod:`briny.master.keys.watch`). Starting a job and
sending its sealed and signed ``pub`` to each targeted minion is its
:class:`briny.master.publisher.Publisher`'s (``server.publisher``, which
runs on the same loop and through the same pools); recent jobs and the
publishes waiting for a minion are :class:`briny.master.jobbook.JobBook`'s;
what a minion may make the master store or fire is
:class:`briny.master.trust.MinionTrust`'s.

Threads (``docs/DEVELOPING.md``, "Threads"):

- **the asyncio loop** (never blocking) owns the session table, the job
  book and the auth backlog, and runs frame parsing, auth hellos and
  challenges, AES-GCM open and seal, the replay guard, the non-blocking
  handlers, Ed25519 signing of publishes, event firing (a non-blocking
  PUSH), ``JobCache.save_*`` (they queue to the cache's own writer thread),
  and applying each newer view of the key store;
- **the operator's threads** (:data:`CONTROL_THREADS`) run a publish's
  targeting and the key store reads (``minions``, the housekeeping), so an
  operator is answered while the workers are busy with an auth storm;
- **the worker threads** (``run_in_executor``) run everything RSA (the
  minion's auth signature, the auth decision, which also reads and writes
  key files, the session key encryption, the reply signature), the
  blocking handlers (pillar,
  files, compiles), state compiles for publishes and job cache pruning;
  they get their inputs as arguments and hand results back by returning,
  never touching what the loop owns;
- the grains cache and the job cache write their files in threads of
  their own.

A frame that does not parse, is over its kind's size limit (a clear
``auth`` frame: :data:`briny.common.wire.MAX_CLEAR_FRAME`), does not open
with the claimed minion's session key, or fails the replay guard is logged
with the claimed id and dropped (a request that does not open with the
session key, and a refused auth, get a clear ``err`` reply, to the sender
only); ``auth`` frames waiting for a worker hold at most
:data:`AUTH_BACKLOG_BYTES` (:class:`Backlog`). What a peer without a session
may cost (answers a second, log lines, memory kept after a burst) is
:class:`briny.master.unauth.PeerGuard`'s. The receive loop survives
anything (see :meth:`MasterServer.serve`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from briny.common import config, crypto, handshake, memtrim, ratelog, wire
from briny.common.ratelog import short as _short
from briny.common.exceptions import AuthError, SaltInvocationError, WireError
from briny.common.transport import ServerTransport
from briny.master.auth import MasterAuth
from briny.master.compile import MasterCompiler
from briny.master.grainscache import GrainsCache
from briny.master.handlers import MinionHandlers
from briny.master.jobbook import JobBook
from briny.master.jobcache.base import JobCache, keep_hours
from briny.master.keys.store import KeyStore
from briny.master.keys.watch import KEY_CHECK_INTERVAL, KeyView, KeyWatch
from briny.master.publisher import Publisher
from briny.master.sessions import Session, SessionTable
from briny.master.trust import MinionTrust
from briny.master.unauth import PeerGuard

log = logging.getLogger(__name__)

Fire = Callable[[str, dict[str, Any]], None]
# a reply, or one to await (a return's: once it is committed), answered without holding up the loop
Handler = Callable[[Session, dict[str, Any]], dict[str, Any] | Awaitable[dict[str, Any]]]

SIGN_KEY = "master_sign.pem"
PRUNE_INTERVAL = 3600.0
AUTH_BACKLOG_BYTES = 32 * 1024 * 1024  # auth frames waiting for a worker, with their bookkeeping
SERVE_TURN = 32  # frames handled in a row before the receive loop lets other tasks run
CONTROL_THREADS = 2  # the operator's pool: targeting and key store reads (MasterServer._in_control)
TASK_OVERHEAD = 4096  # bytes counted per waiting frame for its task and envelope
# the err answer to a request sealed with another key than its id's session key
NOT_OPENED = "the request does not open with this minion's session key; authenticate again"


class Backlog:
    """Bytes of frames waiting for work (loop only): past ``budget`` a new frame is dropped, and
    the drops are logged at most once a second, so a flood costs bounded memory and log lines."""

    def __init__(self, budget: int, what: str) -> None:
        self.budget = budget
        self.what = what
        self.used = 0
        self.waiting = 0
        self.dropped = 0
        self._warn = ratelog.LogThrottle(log)

    def admit(self, size: int) -> bool:
        cost = size + TASK_OVERHEAD
        if self.used + cost <= self.budget:
            self.used += cost
            self.waiting += 1
            return True
        self.dropped += 1
        self._warn.note(
            "%d %s waiting already (%d bytes); dropped one more (a flood?)", self.waiting, self.what, self.used
        )
        return False

    def release(self, size: int) -> None:
        self.used = max(0, self.used - size - TASK_OVERHEAD)
        self.waiting = max(0, self.waiting - 1)


class MasterServer:
    """The master: see the module docstring. Build it (the daemon's ``build_server`` builds it
    with its subsystems), then ``await serve()``.

    ``grains`` is the cache the ``grains`` requests fill and targeting reads;
    ``compiler`` compiles state jobs per minion before they are published
    (None: every minion compiles its own; :attr:`publisher` uses it); ``fire`` sends one event to the
    master bus (an ``EventSender``; tests pass a list's ``append``-like
    function); ``executor`` is the worker pool (default: ``worker_threads``
    threads of its own).
    """

    def __init__(
        self,
        opts: dict[str, Any],
        transport: ServerTransport,
        keys: KeyStore,
        jobcache: JobCache,
        *,
        grains: GrainsCache,
        compiler: MasterCompiler | None = None,
        fire: Fire | None = None,
        executor: concurrent.futures.Executor | None = None,
    ) -> None:
        self.opts = opts
        self.transport = transport
        self.keys = keys
        self.jobcache = jobcache
        self.grains = grains
        self._fire = fire or (lambda tag, data: None)
        self._own_executor = executor is None
        workers = max(2, config.count(opts, "worker_threads"))
        self.executor = executor or concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="briny-master"
        )
        # the operator's own reads (targeting, the key store): never queued behind minions' work
        self._control = concurrent.futures.ThreadPoolExecutor(
            max_workers=CONTROL_THREADS, thread_name_prefix="briny-master-ctl"
        )
        self.keys.ensure_master_keys()
        self._master_priv = self.keys.master_key()
        self.master_pub = self.keys.master_public_pem()
        sign_key = crypto.load_or_create_ed25519(Path(self.keys.pki_dir) / SIGN_KEY)
        self.sign_pub = crypto.ed_public_bytes(sign_key)
        self.auth = MasterAuth(
            self.keys,
            self._master_priv,
            self.master_pub,
            self.sign_pub,
            lambda: bool(config.setting(self.opts, "auto_accept")),
            publish_port=config.count(opts, "publish_port") if "publish_port" in opts else None,
        )
        self.keywatch = KeyWatch(keys)
        self._keys_view: KeyView | None = None  # the newest view of the key store applied
        self.sessions = SessionTable()
        self.jobs = JobBook()
        self.trust = MinionTrust(self.jobs, jobcache)
        self.replay = wire.ReplayGuard()
        self._auth_slots = asyncio.Semaphore(workers * 4)
        self._auth_backlog = Backlog(AUTH_BACKLOG_BYTES, "auth frames")
        self.guard = PeerGuard(opts, log)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping = False
        self._handlers: dict[str, tuple[Callable[..., Any], bool]] = {}
        # told (in a worker thread) of each minion whose key is gone: its other caches forget it
        self.on_forget: list[Callable[[str], None]] = []
        self.publisher = Publisher(
            opts,
            transport,
            self.sessions,
            self.jobs,
            jobcache,
            self.keywatch,
            grains,
            sign_key,
            fire=self.fire,
            spawn=self._spawn,
            in_worker=self._in_worker,
            in_control=self._in_control,
            apply_keys=self.apply_keys,
            compiler=compiler,
        )
        MinionHandlers(self.jobs, self.trust, grains, jobcache, self.fire).register(self)

    # ----- plumbing ---------------------------------------------------------------------------
    def fire(self, tag: str, data: dict[str, Any]) -> None:
        try:
            self._fire(tag, data)
        except Exception:  # an event that cannot be sent must never break the master
            log.exception("could not fire %s", tag)

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a master task failed: %r", task.exception(), exc_info=task.exception())

    async def _in_worker(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    async def _in_control(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn`` in a thread of the operator's own small pool: a publish's targeting and the key
        store reads stay quick while thousands of minions' auths and pillar requests wait for
        the workers (an auth storm)."""
        return await asyncio.get_running_loop().run_in_executor(self._control, fn, *args)

    def register_handler(self, cmd: str, handler: Handler, blocking: bool = True) -> None:
        """Serve ``req`` payloads with ``{"cmd": cmd}`` (e.g. the file server, issue 6).

        ``handler(session, payload) -> reply payload``; with ``blocking`` it
        runs in a worker thread, otherwise on the loop (it must not block).
        """
        self._handlers[cmd] = (handler, blocking)

    # ----- the receive loop -------------------------------------------------------------------
    async def serve(self) -> None:
        """Receive and handle frames until :meth:`stop` (loop). Survives any bad frame.

        Every :data:`SERVE_TURN` frames it lets the loop's other tasks run: a frame already
        waiting is handed over without a pause, so under a flood (an auth storm of thousands)
        the operator's IPC and the spawned tasks would otherwise wait until it ebbs."""
        handled = 0
        while not self._stopping:
            handled += 1
            if handled % SERVE_TURN == 0:
                await asyncio.sleep(0)
            try:
                peer, corr, frame = await self.transport.recv()
            except asyncio.CancelledError:
                raise
            except Exception:  # a transport hiccup: log, breathe, keep serving
                if self._stopping:
                    break
                log.exception("receiving a request failed")
                await asyncio.sleep(0.05)
                continue
            await self.handle_frame(peer, corr, frame)

    async def handle_frame(self, peer: bytes, corr: bytes, frame: bytes) -> None:
        """Handle one ``[peer, corr, frame]`` from the ROUTER (loop)."""
        try:
            env = wire.decode(frame)
        except WireError as exc:
            self.guard.dropped.note("dropped a frame from peer %s: %s", peer.hex()[:16], ratelog.short(exc, 200))
            return
        except Exception as exc:  # noqa: BLE001 - decode is strict, but garbage must never stop the loop
            why = ratelog.short(exc, 200)
            self.guard.dropped.note("dropped a frame from peer %s: %s: %s", peer.hex()[:16], type(exc).__name__, why)
            return
        if len(frame) > wire.frame_limit(env.kind):
            # a clear frame (auth) comes from a peer without a session: never more than a few KiB
            self.guard.dropped.note(
                "dropped a %r frame of %d bytes claiming id %r: over the %d byte limit of %s frames",
                _short(env.kind),
                len(frame),
                _short(env.id),
                wire.frame_limit(env.kind),
                _short(env.kind),
            )
            return
        try:
            if env.kind == "auth":
                await self._auth_frame(peer, corr, env)
            elif env.kind == "req":
                await self._request(peer, corr, env)
            else:
                self.guard.dropped.note(
                    "dropped a %r frame claiming id %r: minions send only auth and req",
                    _short(env.kind),
                    _short(env.id),
                )
        except Exception:
            log.exception("handling a %s frame claiming id %r failed", env.kind, _short(env.id))

    # ----- auth -------------------------------------------------------------------------------
    async def _auth_frame(self, peer: bytes, corr: bytes, env: wire.Envelope) -> None:
        """One ``auth`` frame (loop): a hello gets a challenge at once; a signed auth whose
        challenge this process issued to that id (taken here, so it is used once) goes to a
        worker. Anything else gets an ``err`` reply, to the sender only. A peer over its
        ``auth_peer_rate`` gets nothing (:class:`PeerGuard`)."""
        if not self.guard.allow(peer, env.id):
            return
        try:
            msg = handshake.read_auth(env)
        except WireError as exc:
            self.guard.dropped.note("dropped an auth frame claiming id %r: %s", _short(env.id), exc)
            return
        try:
            if isinstance(msg, handshake.Hello):
                await self.transport.reply(peer, corr, self.auth.hello(msg))
                return
            self.auth.claim(msg)
        except AuthError as exc:
            self.guard.refused.note("refused an auth request claiming id %r: %s", _short(env.id), exc)
            await self._refuse(peer, corr, env.id, str(exc))
            return
        size = len(env.body)
        if self._auth_backlog.admit(size):
            task = self._spawn(self._auth(peer, corr, msg))
            task.add_done_callback(lambda _t: self._auth_backlog.release(size))

    async def _refuse(self, peer: bytes, corr: bytes, minion_id: str, why: str) -> None:
        """A clear ``err`` reply to the peer that sent a request."""
        await self.transport.reply(peer, corr, wire.clear("err", minion_id, {"error": why}).encode())

    async def _auth(self, peer: bytes, corr: bytes, req: handshake.AuthRequest) -> None:
        """A signed auth with its challenge taken: RSA and key files in a worker, then the session."""
        async with self._auth_slots:
            try:
                result = await self._in_worker(self.auth.decide, req)
            except (WireError, AuthError, SaltInvocationError) as exc:
                self.guard.forged.note("refused an auth request claiming id %r: %s", _short(req.id), exc)
                await self._refuse(peer, corr, req.id, f"auth refused: {exc}")
                return
            except OSError as exc:
                log.error("auth of %r failed on the key store: %s", _short(req.id), exc)
                return
        if self._stopping:
            return
        if result.key is not None:
            heard = self.sessions.open(req.id, result.key, peer, result.decided_at)
            log.info("authenticated %s (new session key)", req.id)
            view = self._keys_view
            if view is not None and view.read_at > result.decided_at and req.id not in view.accepted:
                # the key store, read after this decision, no longer accepts the key
                self.drop_session(req.id, "its key is no longer accepted")
            elif heard is not None:  # it had a session: hand it again what it may have missed
                self.jobs.requeue(req.id, heard)
        elif result.status in ("rejected", "pending"):
            # "denied" leaves the accepted key (and its session) alone: anyone can offer
            # another key for an id, and that must not cut the real minion off
            self.drop_session(req.id, f"its key is {result.status}")
        self.fire("salt/auth", result.event)
        await self.transport.reply(peer, corr, result.frame)

    def drop_session(self, minion_id: str, why: str) -> None:
        """Forget a minion's session key at once, and the publishes waiting for it (loop)."""
        self.sessions.drop(minion_id, why)
        self.jobs.drop_pending(minion_id)

    # ----- requests ---------------------------------------------------------------------------
    async def _request(self, peer: bytes, corr: bytes, env: wire.Envelope) -> None:
        sess = self.sessions.get(env.id)
        if sess is None:
            if not self.guard.allow(peer, env.id):
                return
            self.guard.no_session.note("refused a request claiming id %r: no session (unauthenticated)", _short(env.id))
            err = wire.clear("err", env.id, {"error": "unauthenticated"})
            await self.transport.reply(peer, corr, err.encode())
            return
        try:
            payload = wire.open_sealed(env, sess.key)
        except AuthError as exc:
            # sealed with another key (an old session, another peer): tell the sender, and
            # only it, so a minion that lost its session authenticates again at once
            if not self.guard.allow(peer, env.id):
                return
            self.guard.bad_request.note("refused a request claiming id %r: %s", _short(env.id), exc)
            await self._refuse(peer, corr, env.id, NOT_OPENED)
            return
        except WireError as exc:
            self.guard.bad_request.note("dropped a request claiming id %r: %s", _short(env.id), exc)
            return
        try:
            self.replay.check(env)
        except AuthError as exc:
            self.guard.bad_request.note("dropped a request claiming id %r: %s", _short(env.id), exc)
            return
        self.sessions.heard(sess, peer)
        cmd = payload.get("cmd") if isinstance(payload, dict) else None
        entry = self._handlers.get(cmd) if isinstance(cmd, str) else None
        if entry is None:
            shown = _short(cmd) if isinstance(cmd, str) else repr(type(cmd).__name__)
            reply: dict[str, Any] = {"error": f"unknown request {shown!r}"}
        else:
            handler, blocking = entry
            if blocking:
                self._spawn(self._blocking_request(sess, peer, corr, env.nonce, handler, payload))
                self.publisher.deliver_pending(sess)
                return
            try:
                answer = handler(sess, payload)
            except (WireError, SaltInvocationError, ValueError, TypeError) as exc:
                log.warning("request %r from %s refused: %s", cmd, env.id, exc)
                answer = {"error": str(exc)}
            if not isinstance(answer, dict):
                self._spawn(self._reply_when(sess, peer, corr, env.nonce, answer))
                self.publisher.deliver_pending(sess)
                return
            reply = answer
        await self._reply(sess, peer, corr, env.nonce, reply)
        self.publisher.deliver_pending(sess)

    async def _reply_when(
        self, sess: Session, peer: bytes, corr: bytes, nonce: bytes, answer: Awaitable[dict[str, Any]]
    ) -> None:
        await self._reply(sess, peer, corr, nonce, await answer)

    async def _blocking_request(
        self, sess: Session, peer: bytes, corr: bytes, nonce: bytes, handler: Handler, payload: dict[str, Any]
    ) -> None:
        try:
            reply = await self._in_worker(handler, sess, payload)
        except Exception as exc:  # a plugged-in handler failing must not stop the master
            log.exception("request %r from %s failed", payload.get("cmd"), sess.id)
            reply = {"error": f"the master could not serve {payload.get('cmd')!r}: {exc}"}
        await self._reply(sess, peer, corr, nonce, reply)

    async def _reply(self, sess: Session, peer: bytes, corr: bytes, nonce: bytes, payload: dict[str, Any]) -> None:
        """The sealed answer to the request whose nonce is ``nonce`` (bound to it: PROTOCOL.md)."""
        env = wire.sealed_reply(sess.id, sess.key, nonce, payload)
        await self.transport.reply(peer, corr, env.encode())

    # ----- the key store ----------------------------------------------------------------------
    def apply_keys(self, view: KeyView) -> None:
        """Bring the sessions in step with a view of the key store newer than the last applied
        (loop): drop the sessions of minions no longer accepted, forget the grains of minions
        with no key left. An older view (a slower read) changes nothing."""
        if self._keys_view is not None and view.generation <= self._keys_view.generation:
            return
        self._keys_view = view
        for minion_id in self.sessions.keep_only(view.accepted, view.read_at):
            self.jobs.drop_pending(minion_id)
        for minion_id in self.grains.ids():
            sess = self.sessions.get(minion_id)
            if minion_id not in view.known and (sess is None or sess.since < view.read_at):
                self.sessions.forget(minion_id)
                self.grains.remove(minion_id)
                for forget in self.on_forget:
                    self.executor.submit(forget, minion_id)

    async def check_keys(self) -> None:
        """Read the key store (a worker: a ``stat`` per key folder) and apply what changed (loop)."""
        self.apply_keys(await self._in_control(self.keywatch.read))

    # ----- the operator ------------------------------------------------------------------------
    async def minions(self) -> dict[str, Any]:
        """Accepted ids, and those heard from within two ping intervals (loop + a worker)."""
        view = await self._in_control(self.keywatch.read)
        self.apply_keys(view)
        window = 2 * config.number(self.opts, "ping_interval")  # the minions' heartbeat
        return {"accepted": sorted(view.accepted), "connected": self.sessions.connected(window)}

    # ----- housekeeping -----------------------------------------------------------------------
    async def housekeeping(self, interval: float = KEY_CHECK_INTERVAL) -> None:
        """Every ``interval`` s: read the key store, forget old jobs, write the throttled log lines'
        counts, return free memory after a burst of frames without a session
        (:class:`PeerGuard`); hourly: prune the job cache."""
        last_prune = 0.0
        while not self._stopping:
            await asyncio.sleep(interval)
            try:
                ratelog.flush_all()
                if self.guard.second() and memtrim.available():
                    await self._in_worker(memtrim.trim)
                await self.check_keys()
                self.jobs.expire()
                now = time.monotonic()
                if now - last_prune >= PRUNE_INTERVAL:
                    last_prune = now
                    await self._in_worker(self.jobcache.prune, keep_hours(self.opts))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("master housekeeping failed; retrying")

    def stop(self) -> None:
        """Stop serving new frames (loop)."""
        self._stopping = True

    async def drain(self, seconds: float = 1.0) -> int:
        """After :meth:`stop`: handle frames already queued for up to ``seconds`` (loop).

        So returns that reached the socket before SIGTERM are stored.
        """
        handled = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                peer, corr, frame = await asyncio.wait_for(self.transport.recv(), 0.1)
            except asyncio.TimeoutError:
                break
            except Exception:  # the transport is gone: nothing more to drain
                log.warning("draining requests stopped: the transport failed", exc_info=True)
                break
            await self.handle_frame(peer, corr, frame)
            handled += 1
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=max(0.1, deadline - time.monotonic()))
        return handled

    def close(self) -> None:
        """Release the workers (not the transport, job cache or grains cache: their owner closes
        them)."""
        for task in list(self._tasks):
            task.cancel()
        if self._own_executor:
            self.executor.shutdown(wait=False, cancel_futures=True)
        self._control.shutdown(wait=False, cancel_futures=True)
