"""The master's logic over a :class:`ServerTransport`: auth, sessions, requests, publishes.

Owns what ``docs/PROTOCOL.md`` asks of the master: the auth handshake (its
decisions are :class:`briny.master.auth.MasterAuth`) and the per-minion
session keys, every ``req`` a minion sends (``ping``,
``grains``, ``ret``, ``event``; more can be plugged in with
:meth:`MasterServer.register_handler`), one sealed and signed ``pub`` per
targeted minion, the grains cache that targeting reads, the in-memory job
bookkeeping, the events the master fires, and the key-change hook that
drops a session as soon as a key stops being accepted.

Where things run:

- **on the asyncio loop** (never blocking): frame parsing, auth hellos and
  challenges, AES-GCM open and
  seal, the replay guard, the request handlers, Ed25519 signing of
  publishes, the session table (only the loop touches it), event firing
  (a non-blocking PUSH), ``JobCache.save_*`` (they queue to the cache's own
  writer thread);
- **in the executor's worker threads**: everything RSA (the minion's auth
  signature, the auth decision, which also reads and writes key files, the
  session key encryption, the reply signature), targeting (key store
  listings + grains matching), key store re-reads, grains cache writes, job
  cache pruning.

A frame that does not parse, is over its kind's size limit (a clear
``auth`` frame: :data:`briny.common.wire.MAX_CLEAR_FRAME`), does not open
with the claimed minion's session key, or fails the replay guard is logged
with the claimed id and dropped (a request that does not open with the session key, and a
refused auth, get a clear ``err`` reply, to the sender only); ``auth`` frames waiting for a worker hold
at most :data:`AUTH_BACKLOG_BYTES` (:class:`Backlog`). A return, or a
``salt/job/<jid>/ret/...`` event, is taken only for a job that targets the
sender (in memory, else the job cache's index); the tag rules of forwarded
events are :mod:`briny.master.tags`'. The receive loop survives anything
(see :meth:`MasterServer.serve`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from briny.common import crypto, handshake, wire
from briny.common.exceptions import AuthError, JobCacheError, SaltInvocationError, WireError
from briny.common.ids import valid_id, valid_jid
from briny.common.jid import gen_jid
from briny.common.numbers import positive
from briny.common.transport import ServerTransport, topic_for
from briny.master.auth import MasterAuth
from briny.master.compile import MasterCompiler
from briny.master.fileserver import FileServer
from briny.master.jobcache import RETURN_KEYS, JobCache, keep_hours
from briny.master.keys import KeyStore
from briny.master.pillar import MinionPillars
from briny.master.tags import minion_tag
from briny.master.targeting import GrainsCache, check_minions, check_target

log = logging.getLogger(__name__)

Fire = Callable[[str, dict[str, Any]], None]
Handler = Callable[["Session", dict[str, Any]], dict[str, Any]]

SIGN_KEY = "master_sign.pem"
JOB_MEMORY = 3600.0  # seconds a job's bookkeeping is kept in memory
PENDING_MIN = 10.0  # a publish waits at least this long for a minion to (re)authenticate
KEY_CHECK_INTERVAL = 1.0  # seconds between key store re-reads (a backstop to keys_changed)
PRUNE_INTERVAL = 3600.0
AUTH_BACKLOG_BYTES = 32 * 1024 * 1024  # auth frames waiting for a worker, with their bookkeeping
TASK_OVERHEAD = 4096  # bytes counted per waiting frame for its task and envelope
# the err answer to a request sealed with another key than its id's session key
NOT_OPENED = "the request does not open with this minion's session key; authenticate again"


def _short(value: str) -> str:
    return value if len(value) <= 64 else value[:61] + "..."


@dataclass
class Session:
    """One authenticated minion: its session key and where it last spoke from."""

    id: str
    key: bytes
    peer: bytes
    since: float  # monotonic time of the auth that made the key
    started: bool = False  # salt/minion/<id>/start fired for this session


@dataclass
class Job:
    """What the master remembers of a recent job (returns themselves go to the job cache)."""

    jid: str
    fun: str
    minions: set[str]
    created: float
    cached: bool  # False for saltutil.find_job probes: events only
    returned: set[str] = field(default_factory=set)
    load: dict[str, Any] | None = None  # the publish, to hand again to a minion that re-authenticates
    loads: dict[str, dict[str, Any]] = field(default_factory=dict)  # per minion, with "compiled"


@dataclass
class _PendingPub:
    deadline: float
    payload: dict[str, Any]


class Backlog:
    """Bytes of frames waiting for work (loop only): past ``budget`` a new frame is dropped, and
    the drops are logged at most once a second, so a flood costs bounded memory and log lines."""

    def __init__(self, budget: int, what: str) -> None:
        self.budget = budget
        self.what = what
        self.used = 0
        self.waiting = 0
        self.dropped = 0
        self._logged = 0.0

    def admit(self, size: int) -> bool:
        cost = size + TASK_OVERHEAD
        if self.used + cost <= self.budget:
            self.used += cost
            self.waiting += 1
            return True
        self.dropped += 1
        now = time.monotonic()
        if now - self._logged >= 1.0:
            self._logged = now
            log.warning(
                "%d %s waiting already (%d bytes); dropped %d more so far (a flood?)",
                self.waiting,
                self.what,
                self.used,
                self.dropped,
            )
        return False

    def release(self, size: int) -> None:
        self.used = max(0, self.used - size - TASK_OVERHEAD)
        self.waiting = max(0, self.waiting - 1)


class MasterServer:
    """The master: see the module docstring. Build it, then ``await serve()``.

    ``fire`` sends one event to the master bus (an ``EventSender``); tests
    pass a list's ``append``-like function.
    """

    def __init__(
        self,
        opts: dict[str, Any],
        transport: ServerTransport,
        keys: KeyStore,
        jobcache: JobCache,
        fire: Fire | None = None,
        executor: concurrent.futures.Executor | None = None,
    ) -> None:
        self.opts = opts
        self.transport = transport
        self.keys = keys
        self.jobcache = jobcache
        self._fire = fire or (lambda tag, data: None)
        self._own_executor = executor is None
        self.executor = executor or concurrent.futures.ThreadPoolExecutor(
            max_workers=max(2, int(opts.get("worker_threads") or 5)), thread_name_prefix="briny-master"
        )
        # one thread for grains writes, so the writes of one minion land in order
        self._disk = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="briny-grains")
        self.keys.ensure_master_keys()
        self._master_priv = self.keys.master_key()
        self.master_pub = self.keys.master_public_pem()
        self._sign_key = crypto.load_or_create_ed25519(Path(self.keys.pki_dir) / SIGN_KEY)
        self.sign_pub = crypto.ed_public_bytes(self._sign_key)
        self.auth = MasterAuth(
            self.keys,
            self._master_priv,
            self.master_pub,
            self.sign_pub,
            lambda: bool(self.opts.get("auto_accept", False)),
        )
        self.grains = GrainsCache(str(opts.get("cachedir") or "/var/cache/briny/master"))
        loaded = self.grains.load_all()
        if loaded:
            log.info("loaded the cached grains of %d minions", loaded)
        self.sessions: dict[str, Session] = {}
        self.last_seen: dict[str, float] = {}
        self.jobs: dict[str, Job] = {}
        self._local_calls: dict[tuple[str, str], tuple[str, float]] = {}  # (id, its jid) -> (jid, made)
        self._pending: dict[str, list[_PendingPub]] = {}
        self.replay = wire.ReplayGuard()
        self._auth_slots = asyncio.Semaphore(max(2, int(opts.get("worker_threads") or 5)) * 4)
        self._auth_backlog = Backlog(AUTH_BACKLOG_BYTES, "auth frames")
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping = False
        self._handlers: dict[str, tuple[Callable[..., Any], bool]] = {
            "ping": (self._req_ping, False),
            "grains": (self._req_grains, False),
            "ret": (self._req_ret, False),
            "event": (self._req_event, False),
        }
        # each minion's pillar from the master's pillar_roots (compiled in the workers)
        self.pillar = MinionPillars(opts, self.grains.get)
        self.pillar.register(self)
        # file_roots for authenticated minions (file_envs, file_list, file_hash, file_chunk)
        self.fileserver = FileServer(opts)
        self.fileserver.register(self)
        # state jobs compiled per minion (master/compile.py; in the workers)
        self.minion_config: dict[str, Any] = {}  # what the master took of each minion's reported config
        self.compiler = MasterCompiler(opts, self.fileserver, self.pillar, self.grains.get, self.minion_config.get)
        self.compiler.register(self)  # the ``compile`` request (briny-call on a minion)

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

    def register_handler(self, cmd: str, handler: Handler, blocking: bool = True) -> None:
        """Serve ``req`` payloads with ``{"cmd": cmd}`` (e.g. the file server, issue 6).

        ``handler(session, payload) -> reply payload``; with ``blocking`` it
        runs in a worker thread, otherwise on the loop (it must not block).
        """
        self._handlers[cmd] = (handler, blocking)

    # ----- the receive loop -------------------------------------------------------------------
    async def serve(self) -> None:
        """Receive and handle frames until :meth:`stop` (loop). Survives any bad frame."""
        while not self._stopping:
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
            log.warning("dropped a frame from peer %s: %s", peer.hex()[:16], exc)
            return
        except Exception as exc:  # decode is strict, but garbage must never stop the loop
            log.warning("dropped a frame from peer %s: %s: %s", peer.hex()[:16], type(exc).__name__, exc)
            return
        if len(frame) > wire.frame_limit(env.kind):
            # a clear frame (auth) comes from a peer without a session: never more than a few KiB
            log.warning(
                "dropped a %r frame of %d bytes claiming id %r: over the %d byte limit of %s frames",
                env.kind,
                len(frame),
                _short(env.id),
                wire.frame_limit(env.kind),
                env.kind,
            )
            return
        try:
            if env.kind == "auth":
                await self._auth_frame(peer, corr, env)
            elif env.kind == "req":
                await self._request(peer, corr, env)
            else:
                log.warning(
                    "dropped a %r frame claiming id %r: minions send only auth and req", env.kind, _short(env.id)
                )
        except Exception:
            log.exception("handling a %s frame claiming id %r failed", env.kind, _short(env.id))

    # ----- auth -------------------------------------------------------------------------------
    async def _auth_frame(self, peer: bytes, corr: bytes, env: wire.Envelope) -> None:
        """One ``auth`` frame (loop): a hello gets a challenge at once; a signed auth whose
        challenge this process issued to that id (taken here, so it is used once) goes to a
        worker. Anything else gets an ``err`` reply, to the sender only."""
        try:
            msg = handshake.read_auth(env)
        except WireError as exc:
            log.warning("dropped an auth frame claiming id %r: %s", _short(env.id), exc)
            return
        try:
            if isinstance(msg, handshake.Hello):
                await self.transport.reply(peer, corr, self.auth.hello(msg))
                return
            self.auth.claim(msg)
        except AuthError as exc:
            log.warning("refused an auth request claiming id %r: %s", _short(env.id), exc)
            await self._refuse(peer, corr, env.id, str(exc))
            return
        if self._auth_backlog.admit(len(env.body)):
            task = self._spawn(self._auth(peer, corr, msg))
            task.add_done_callback(lambda _t, size=len(env.body): self._auth_backlog.release(size))

    async def _refuse(self, peer: bytes, corr: bytes, minion_id: str, why: str) -> None:
        """A clear ``err`` reply to the peer that sent a request."""
        await self.transport.reply(peer, corr, wire.clear("err", minion_id, {"error": why}).encode())

    async def _auth(self, peer: bytes, corr: bytes, req: handshake.AuthRequest) -> None:
        """A signed auth with its challenge taken: RSA and key files in a worker, then the session."""
        async with self._auth_slots:
            try:
                result = await self._in_worker(self.auth.decide, req)
            except (WireError, AuthError, SaltInvocationError) as exc:
                log.warning("refused an auth request claiming id %r: %s", _short(req.id), exc)
                await self._refuse(peer, corr, req.id, f"auth refused: {exc}")
                return
            except OSError as exc:
                log.error("auth of %r failed on the key store: %s", _short(req.id), exc)
                return
        if self._stopping:
            return
        if result.key is not None:
            replaced = req.id in self.sessions
            heard = self.last_seen.get(req.id, 0.0)
            self.sessions[req.id] = Session(req.id, result.key, peer, time.monotonic())
            self.last_seen[req.id] = time.monotonic()
            log.info("authenticated %s (new session key)", req.id)
            if replaced:
                self._requeue(req.id, heard)
        elif result.status in ("rejected", "pending"):
            # "denied" leaves the accepted key (and its session) alone: anyone can offer
            # another key for an id, and that must not cut the real minion off
            self.drop_session(req.id, f"its key is {result.status}")
        self.fire("salt/auth", result.event)
        await self.transport.reply(peer, corr, result.frame)

    def _requeue(self, minion_id: str, heard: float) -> None:
        """A minion that authenticates again while it still had a session (it restarted, or lost
        the master for a while) cannot open what was sealed with its old key: hand it, after its
        first request, the recent jobs published since it was last heard from (``heard``) that it
        has not returned (it ignores jids it already took). Jobs from before that were sent while
        it was alive: a minion killed while running one does not run it again after a restart."""
        now = time.monotonic()
        waiting = self._pending.setdefault(minion_id, [])
        queued = {p.payload.get("jid") for p in waiting}
        for job in self.jobs.values():
            if job.load is None or minion_id not in job.minions or minion_id in job.returned or job.created < heard:
                continue
            deadline = job.created + max(PENDING_MIN, float(job.load.get("timeout") or 0))
            if deadline >= now and job.jid not in queued:
                waiting.append(_PendingPub(deadline, job.loads.get(minion_id, job.load)))
        if not waiting:
            del self._pending[minion_id]

    def drop_session(self, minion_id: str, why: str) -> None:
        """Forget a minion's session key at once: it can open nothing more (loop)."""
        if self.sessions.pop(minion_id, None) is not None:
            log.info("dropped the session of %s: %s", minion_id, why)
        self._pending.pop(minion_id, None)

    # ----- requests ---------------------------------------------------------------------------
    async def _request(self, peer: bytes, corr: bytes, env: wire.Envelope) -> None:
        sess = self.sessions.get(env.id)
        if sess is None:
            log.info("refused a request claiming id %r: no session (unauthenticated)", _short(env.id))
            err = wire.clear("err", env.id, {"error": "unauthenticated"})
            await self.transport.reply(peer, corr, err.encode())
            return
        try:
            payload = wire.open_sealed(env, sess.key)
        except AuthError as exc:
            # sealed with another key (an old session, another peer): tell the sender, and
            # only it, so a minion that lost its session authenticates again at once
            log.warning("refused a request claiming id %r: %s", _short(env.id), exc)
            await self._refuse(peer, corr, env.id, NOT_OPENED)
            return
        except WireError as exc:
            log.warning("dropped a request claiming id %r: %s", _short(env.id), exc)
            return
        try:
            self.replay.check(env)
        except AuthError as exc:
            log.warning("dropped a request claiming id %r: %s", _short(env.id), exc)
            return
        sess.peer = peer
        self.last_seen[env.id] = time.monotonic()
        cmd = payload.get("cmd") if isinstance(payload, dict) else None
        entry = self._handlers.get(cmd) if isinstance(cmd, str) else None
        if entry is None:
            shown = _short(cmd) if isinstance(cmd, str) else repr(type(cmd).__name__)
            reply: dict[str, Any] = {"error": f"unknown request {shown!r}"}
        else:
            handler, blocking = entry
            if blocking:
                self._spawn(self._blocking_request(sess, peer, corr, env.nonce, handler, payload))
                self._deliver_pending(sess)
                return
            try:
                reply = handler(sess, payload)
            except (WireError, SaltInvocationError, ValueError, TypeError) as exc:
                log.warning("request %r from %s refused: %s", cmd, env.id, exc)
                reply = {"error": str(exc)}
        await self._reply(sess, peer, corr, env.nonce, reply)
        self._deliver_pending(sess)

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

    def _req_ping(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "time": time.time()}

    def _req_grains(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any]:
        grains = payload.get("grains")
        if not isinstance(grains, dict):
            raise WireError("'grains' must be a map")
        self.grains.put(sess.id, grains)
        self._disk.submit(self.grains.write, sess.id, grains)
        if "opts" in payload:  # only what templates may read (common/reported.py), size-capped
            from briny.common.reported import accept_reported

            taken = accept_reported(payload.get("opts"), sess.id)
            if taken is None:
                self.minion_config.pop(sess.id, None)
            else:
                self.minion_config[sess.id] = taken
        if not sess.started:
            sess.started = True
            tag = f"salt/minion/{sess.id}/start"
            self.fire(
                tag,
                {
                    "id": sess.id,
                    "cmd": "_minion_event",
                    "pretag": None,
                    "tag": tag,
                    "data": f"Minion {sess.id} started at {time.ctime()}",
                },
            )
        return {"ok": True}

    def _not_sent(self, jid: str, minion_id: str) -> str | None:
        """Why ``minion_id`` may not return for ``jid``, or None: the job in memory, else the job
        cache's targets (one indexed lookup; after a restart or once JOB_MEMORY expired)."""
        job = self.jobs.get(jid)
        if job is not None:
            return None if minion_id in job.minions else f"job {jid} was not sent to {minion_id}"
        if not valid_jid(jid):
            return f"{jid[:40]!r} is not a job id"
        try:
            targeted = self.jobcache.targeted(jid, minion_id)
        except Exception as exc:  # a cache that cannot answer: refuse rather than store blindly
            log.exception("the job cache could not say whether job %s targets %s", jid, minion_id)
            return f"the master could not check job {jid}: {exc}"
        if targeted is None:
            return f"job {jid} is not a job of this master"
        return None if targeted else f"job {jid} was not sent to {minion_id}"

    def _req_ret(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any]:
        jid = payload.get("jid")
        if jid == "req":
            return self._local_return(sess, payload)
        if not valid_jid(jid):
            raise WireError(f"'jid' must be a job id of 20 digits, not {str(jid)[:40]!r}")
        if "return" not in payload:
            raise WireError("a return needs a 'return' field")
        refused = self._not_sent(jid, sess.id)
        if refused is not None:
            log.warning("%s returned for job %s: %s; dropped", sess.id, jid, refused)
            return {"error": refused}
        self._store_return(sess, jid, payload)
        return {"ok": True}

    def _local_return(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any]:
        """The return of a minion's own call (``briny-call`` through its daemon, ``jid: "req"``,
        as Salt's ``salt-call``): the master makes the job, targeting that minion alone, under a
        jid of its own; ``local_jid`` (the minion's) makes a return sent twice one job."""
        if "return" not in payload or not isinstance(payload.get("fun"), str):
            raise WireError("a return needs a 'return' field and a 'fun' string")
        local = payload.get("local_jid")
        if local is not None and not valid_jid(local):
            raise WireError(f"'local_jid' must be a job id of 20 digits, not {str(local)[:40]!r}")
        known = self._local_calls.get((sess.id, local)) if local else None
        if known is not None:
            return {"ok": True, "jid": known[0]}
        jid = gen_jid()
        fun_args = payload.get("fun_args")
        load = {
            "jid": jid,
            "fun": payload["fun"],
            "arg": fun_args if isinstance(fun_args, list) else [],
            "tgt": sess.id,
            "tgt_type": "glob",
            "user": "root",
        }
        if local:
            load["local_jid"] = local
        try:
            self.jobcache.save_load(jid, load, [sess.id])
        except (JobCacheError, SaltInvocationError) as exc:
            log.error("the local call %s of %s was not stored: %s", local, sess.id, exc)
            return {"error": f"the master could not store the call: {exc}"}
        if local:
            self._local_calls[(sess.id, local)] = (jid, time.monotonic())
        self._store_return(sess, jid, payload)
        return {"ok": True, "jid": jid}

    def _store_return(self, sess: Session, jid: str, payload: dict[str, Any]) -> None:
        """Store a checked return (unless its job is a probe kept out of the cache) and fire it."""
        job = self.jobs.get(jid)
        record = {k: payload[k] for k in RETURN_KEYS if k in payload}
        log.info("Got return from %s for job %s", sess.id, jid)
        if job is None or job.cached:
            try:
                self.jobcache.save_return(jid, sess.id, record)
            except (JobCacheError, SaltInvocationError) as exc:
                log.error("the return of %s for job %s was not stored: %s", sess.id, jid, exc)
        if job is not None:
            job.returned.add(sess.id)
        data = {
            "jid": jid,
            "id": sess.id,
            "cmd": "_return",
            "fun": payload.get("fun", ""),
            "fun_args": payload.get("fun_args", []),
            **record,
        }
        data.setdefault("retcode", 0)
        data.setdefault("success", True)
        self.fire(f"salt/job/{jid}/ret/{sess.id}", data)

    def _req_event(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any]:
        data = payload.get("data", {})
        if not isinstance(data, dict):
            raise WireError("event 'data' must be a map")
        checked = minion_tag(payload.get("tag"), sess.id)  # WireError: refused (logged, answered)
        if checked.ret_jid is not None:
            refused = self._not_sent(checked.ret_jid, sess.id) if checked.ret_jid else "not a job id"
            if refused is not None:
                log.warning("%s fired %r: %s; dropped", sess.id, _short(checked.tag), refused)
                return {"error": f"a return event for a job not sent to {sess.id}: {refused}"}
        if checked.bound:
            data = {**data, "id": sess.id}
        self.fire(checked.tag, data)
        return {"ok": True}

    # ----- publishing -------------------------------------------------------------------------
    def _accepted_now(self) -> set[str]:
        """Ids whose key is accepted and not also rejected (worker: reads the key store)."""
        listing = self.keys.list_keys()
        return set(listing.get("minions", [])) - set(listing.get("minions_rejected", []))

    def _match(self, tgt: Any, tgt_type: str) -> tuple[list[str], set[str], float]:
        snap = time.monotonic()
        accepted = self._accepted_now()
        return check_minions(tgt, tgt_type, accepted, self.grains.get, self.opts), accepted, snap

    def _sync_sessions(self, accepted: set[str], snapshot: float) -> None:
        """Drop the sessions of minions no longer accepted (loop).

        A session made after ``snapshot`` is kept: its auth saw a newer key store.
        """
        for minion_id, sess in list(self.sessions.items()):
            if minion_id not in accepted and sess.since < snapshot:
                self.drop_session(minion_id, "its key is no longer accepted")

    async def publish(
        self,
        tgt: Any,
        tgt_type: str,
        fun: str,
        arg: list[Any] | None = None,
        kwarg: dict[str, Any] | None = None,
        timeout: float | None = None,
        user: str | None = None,
        *,
        cache: bool = True,
        progress: bool = False,
    ) -> dict[str, Any]:
        """Start a job (loop; targeting runs in a worker).

        Returns ``{"jid", "minions"}`` once the job is in the job cache and
        ``salt/job/<jid>/new`` is fired; the publishes go out right after.
        ``{"jid": "", "minions": []}`` when no minion matched (nothing is
        stored or sent, as Salt assigns no jid then); ``{"error": ...}`` for a
        bad request.
        """
        tgt_type = str(tgt_type or "glob").lower()
        arg = [] if arg is None else arg
        kwarg = {} if kwarg is None else kwarg
        if not isinstance(fun, str) or not fun:
            return {"error": "a job needs a function name (e.g. test.ping)"}
        if not isinstance(arg, list) or not isinstance(kwarg, dict):
            return {"error": "'arg' must be a list and 'kwarg' a map"}
        timeout = self._timeout(timeout)
        try:
            check_target(tgt, tgt_type)
            minions, accepted, snap = await self._in_worker(self._match, tgt, tgt_type)
        except SaltInvocationError as exc:
            return {"error": str(exc)}
        self._sync_sessions(accepted, snap)
        if not minions:
            return {"jid": "", "minions": []}
        jid = gen_jid()
        load = {
            "jid": jid,
            "fun": fun,
            "arg": arg,
            "kwarg": kwarg,
            "tgt": tgt,
            "tgt_type": tgt_type,
            "user": str(user or "root"),
            "timeout": timeout,
        }
        if progress:  # `briny` on a terminal: the minions send progress events of state runs
            load["progress"] = True
        if cache:
            try:
                self.jobcache.save_load(jid, load, minions)
            except (JobCacheError, SaltInvocationError) as exc:
                return {"error": f"the job could not be stored in the job cache: {exc}"}
        self.jobs[jid] = Job(jid, fun, set(minions), time.monotonic(), cache, load=load)
        log.info("User %s Published command %s with jid %s", load["user"], fun, jid)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("job %s targets %s", jid, ", ".join(minions))
        self.fire(
            f"salt/job/{jid}/new",
            {
                "jid": jid,
                "tgt": tgt,
                "tgt_type": tgt_type,
                "fun": fun,
                "arg": arg,
                "minions": minions,
                "user": load["user"],
            },
        )
        self._spawn(self._send_publishes(load, minions))
        return {"jid": jid, "minions": minions}

    def _timeout(self, timeout: Any) -> float:
        asked = positive(timeout, None)
        if asked is not None:
            return asked
        default = self.opts.get("timeout", 5)
        return float(default) if isinstance(default, (int, float)) and default > 0 else 5.0

    def _pub_frame(self, sess: Session, load: dict[str, Any]) -> bytes:
        env = wire.sealed("pub", sess.id, sess.key, load)
        return wire.sign(env, self._sign_key).encode()

    async def _send_publishes(self, load: dict[str, Any], minions: list[str]) -> None:
        """One sealed, signed publish per minion under its own topic (loop). A state job is
        compiled for each minion first (in a worker) and its publish carries ``compiled``."""
        deadline = time.monotonic() + max(PENDING_MIN, float(load.get("timeout") or 0))
        compiling = self.compiler.wants(load.get("fun"))
        roots = await self._in_worker(self.compiler.roots_signature) if compiling else None
        job = self.jobs.get(load["jid"])
        plain = load
        for count, minion_id in enumerate(minions, 1):
            load = plain
            if compiling:
                try:
                    compiled = await self._in_worker(self.compiler.compile_for, minion_id, plain, roots)
                except Exception:  # never lose the job: the minion compiles itself
                    log.exception("compiling job %s for %s failed", plain["jid"], minion_id)
                    compiled = None
                if compiled is not None:
                    load = {**plain, "compiled": compiled}
                    if job is not None:
                        job.loads[minion_id] = load
            sess = self.sessions.get(minion_id)
            if sess is None:
                # not connected right now (a master restart, a reconnect): hand it the job
                # on its first request after it authenticates, if that is soon enough
                self._pending.setdefault(minion_id, []).append(_PendingPub(deadline, load))
                log.debug("%s has no session; job %s waits for it", minion_id, load["jid"])
                continue
            await self.transport.publish(topic_for(minion_id), self._pub_frame(sess, load))
            if count % 64 == 0:
                await asyncio.sleep(0)

    def _deliver_pending(self, sess: Session) -> None:
        waiting = self._pending.pop(sess.id, None)
        if not waiting:
            return
        now = time.monotonic()
        for item in waiting:
            if item.deadline >= now:
                log.info("sending job %s to %s now that it is back", item.payload["jid"], sess.id)
                self._spawn(self.transport.publish(topic_for(sess.id), self._pub_frame(sess, item.payload)))

    async def find_job(self, jid: Any, minions: Any) -> dict[str, Any]:
        """Ask ``minions`` whether they still run ``jid`` (``saltutil.find_job``)."""
        if not valid_jid(jid):
            return {"error": f"find_job needs a job id of 20 digits, not {str(jid)[:40]!r}"}
        if not isinstance(minions, list) or not all(isinstance(m, str) and valid_id(m) for m in minions):
            return {"error": "find_job needs 'minions', a list of minion ids"}
        if not minions:
            return {"jid": "", "minions": []}
        return await self.publish(minions, "list", "saltutil.find_job", [jid], {}, None, "root", cache=False)

    async def minions(self) -> dict[str, Any]:
        """Accepted ids, and those heard from within two ping intervals (loop + a worker)."""
        accepted = await self._in_worker(self._accepted_now)
        interval = self.opts.get("ping_interval") or 10
        window = 2 * float(interval if isinstance(interval, (int, float)) and interval > 0 else 10)
        now = time.monotonic()
        connected = sorted(i for i, seen in self.last_seen.items() if i in self.sessions and now - seen <= window)
        return {"accepted": sorted(accepted), "connected": connected}

    async def keys_changed(self) -> dict[str, Any]:
        """Re-read the key store; drop sessions (and grains) of keys no longer accepted."""
        snap = time.monotonic()
        accepted, gone = await self._in_worker(self._key_scan)
        self._sync_sessions(accepted, snap)
        for minion_id in gone:
            self.last_seen.pop(minion_id, None)
            self._disk.submit(self.grains.remove, minion_id)
        return {"ok": True}

    def _key_scan(self) -> tuple[set[str], list[str]]:
        """(accepted ids, ids with cached grains but no key at all) — worker."""
        listing = self.keys.list_keys()
        accepted = set(listing.get("minions", [])) - set(listing.get("minions_rejected", []))
        known = set().union(*(set(v) for v in listing.values()))
        return accepted, [i for i in self.grains.ids() if i not in known]

    def key_hook(self, loop: asyncio.AbstractEventLoop) -> Callable[..., None]:
        """A ``keys.set_notify_hook`` function: safe to call from any thread."""

        def hook(_opts: dict[str, Any], _change: Any) -> None:
            loop.call_soon_threadsafe(lambda: self._spawn(self.keys_changed()))

        return hook

    # ----- housekeeping -----------------------------------------------------------------------
    async def housekeeping(self) -> None:
        """Every second: re-read the key store; hourly: prune the job cache (loop + workers)."""
        last_prune = 0.0
        while not self._stopping:
            await asyncio.sleep(KEY_CHECK_INTERVAL)
            try:
                await self.keys_changed()
                now = time.monotonic()
                for jid in [j for j, job in self.jobs.items() if now - job.created > JOB_MEMORY]:
                    del self.jobs[jid]
                for key in [k for k, (_, made) in self._local_calls.items() if now - made > JOB_MEMORY]:
                    del self._local_calls[key]
                for minion_id in list(self._pending):
                    kept = [p for p in self._pending[minion_id] if p.deadline >= now]
                    if kept:
                        self._pending[minion_id] = kept
                    else:
                        del self._pending[minion_id]
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
        """Release the workers (not the transport or job cache: their owner closes them)."""
        for task in list(self._tasks):
            task.cancel()
        self._disk.shutdown(wait=True)
        if self._own_executor:
            self.executor.shutdown(wait=False, cancel_futures=True)
