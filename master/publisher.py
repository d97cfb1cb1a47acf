"""The master's publish path: starting a job and getting its publish to each targeted minion.

:meth:`Publisher.publish` checks the request, matches the target against the
accepted keys (grains, and each minion's pillar for pillar targets), makes
the jid, commits the job's row in the job cache (``store_new_job``: a kill
-9 keeps the job), records the job in the :class:`~briny.master.jobbook.JobBook`
and fires ``salt/job/<jid>/new``; then one publish per minion goes out,
compiled for that minion first when the job is a state job
(:class:`~briny.master.compile.MasterCompiler`), sealed with the minion's
session key and signed with the master's Ed25519 key, under the minion's
own topic (``docs/PROTOCOL.md``, "Publishes"). A minion without a session
gets its publish handed over later: the job book keeps it
(:meth:`JobBook.wait`, :meth:`JobBook.requeue`; a publish ZeroMQ dropped: :meth:`JobBook.resend`
on the minion's next ping) and
:meth:`Publisher.deliver_pending` sends it after the minion's next request.
:meth:`Publisher.find_job` is the ``saltutil.find_job`` probe, a publish
kept out of the job cache.

Threads (``docs/DEVELOPING.md``, "Threads"): the publisher belongs to the
:class:`~briny.master.server.MasterServer` and, like it, runs on **the
asyncio loop**: checking the request, the job book and the session table
(both check it, ``assert_on_loop``), firing, ``JobCache.save_*`` through
``store_new_job`` (queued to the cache's writer thread and awaited), sealing
and Ed25519 signing, sending. Two parts
leave the loop through the server's pools, getting their inputs as
arguments and handing results back by returning: a publish's targeting
(:meth:`Publisher._match`: ``KeyWatch.read`` and ``check_minions`` over the
grains cache) runs in **the operator's threads**, so an operator is answered
during an auth storm; a state job's compiles (the compiler's roots signature,
then one compile per minion) run in **the worker threads**. The publisher
never owns a pool or a task of its own: the server's ``spawn`` tracks its
sending tasks (so ``drain`` waits for them and ``close`` cancels them).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ed25519

from briny.master.eauthacl import allows_local
from briny.common import config, wire
from briny.common.args import salt_arg
from briny.common.exceptions import JobCacheError, SaltInvocationError
from briny.common.ids import valid_id, valid_jid
from briny.common.jid import gen_jid
from briny.common.numbers import positive
from briny.common.transport import ServerTransport, topic_for
from briny.master.compile import MasterCompiler
from briny.master.grainscache import GrainsCache
from briny.master.jobbook import JobBook, pending_deadline
from briny.master.jobcache.base import JobCache, store_new_job
from briny.master.keys.watch import KeyView, KeyWatch
from briny.master.sessions import Session, SessionTable
from briny.master.targeting import check_minions, check_target


log = logging.getLogger(__name__)

Fire = Callable[[str, dict[str, Any]], None]
Spawn = Callable[[Awaitable[Any]], asyncio.Task[Any]]
InPool = Callable[..., Awaitable[Any]]  # (fn, *args): fn(*args) in a thread of a pool, awaited
PUBLISH_TURN = 64  # publishes sent in a row before the loop's other tasks get a turn


def _names_pillar(tgt: Any, tgt_type: str) -> bool:
    """Does this target read pillar (so each minion's pillar must be looked up)?"""
    if tgt_type in ("pillar", "pillar_pcre", "pillar_exact"):
        return True
    if tgt_type == "nodegroup":
        return True
    return tgt_type == "compound" and isinstance(tgt, str) and any(w in tgt for w in ("I@", "J@", "N@"))


def missing_minions(tgt: Any, tgt_type: str, minions: list[str]) -> list[str]:
    """The ids a list target names that matched no minion (Salt's ``missing``; [] for the
    other target types, as Salt's)."""
    if tgt_type != "list":
        return []
    names = tgt.split(",") if isinstance(tgt, str) else tgt if isinstance(tgt, list) else []
    found = set(minions)
    return [str(n) for n in names if str(n) not in found]


def job_events(load: dict[str, Any], minions: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The events Salt's master fires when a job is published, in its order: the bare ``<jid>``
    (the targeted minions), ``salt/job/<jid>/new`` and ``salt/job/<jid>/publish``."""
    jid, arg = load["jid"], salt_arg(load.get("arg") or [], load.get("kwarg") or {})
    tgt = load["tgt"]
    if load["tgt_type"] == "list" and isinstance(tgt, str):  # Salt's CLI sends a list target as a list
        tgt = [t for t in tgt.split(",") if t]
    common = {"tgt": tgt, "tgt_type": load["tgt_type"], "user": load["user"], "fun": load["fun"], "arg": arg}
    missing = missing_minions(load["tgt"], load["tgt_type"], minions)
    new = {"jid": jid, **common, "minions": list(minions), "missing": missing}
    publish = {**common, "jid": jid, "ret": load.get("ret") or ""}
    return [(jid, {"minions": list(minions)}), (f"salt/job/{jid}/new", new), (f"salt/job/{jid}/publish", publish)]


@dataclass(eq=False, repr=False)  # a service, not a record: no generated repr (the key, opts)
class Publisher:
    """Jobs started and their publishes sent (see the module docstring); built by the server.

    ``sign_key`` is the master's Ed25519 key (its public half goes to each
    minion in the auth reply); ``compiler`` compiles state jobs per minion
    before they are published (None: every minion compiles its own);
    ``pillar_of`` gives a minion's pillar for pillar targets (-I, I@, J@; any
    thread: the daemon sets it). ``spawn``, ``in_worker`` and ``in_control``
    are the server's task set, worker pool and operator pool; ``apply_keys``
    takes the view of the key store a publish's targeting read (the server
    keeps its sessions in step).
    """

    opts: dict[str, Any]
    transport: ServerTransport
    sessions: SessionTable
    jobs: JobBook
    jobcache: JobCache
    keywatch: KeyWatch
    grains: GrainsCache
    sign_key: ed25519.Ed25519PrivateKey
    _: KW_ONLY
    fire: Fire
    spawn: Spawn
    in_worker: InPool
    in_control: InPool
    apply_keys: Callable[[KeyView], None]
    compiler: MasterCompiler | None = None
    pillar_of: Callable[[str], Mapping[str, Any] | None] | None = None

    # ----- targeting --------------------------------------------------------------------------
    def _match(self, tgt: Any, tgt_type: str) -> tuple[list[str], KeyView]:
        """(the ids ``tgt`` names, the key store view they were taken from) — operator's thread."""
        view = self.keywatch.read()
        pillar_of = self.pillar_of if _names_pillar(tgt, tgt_type) else None
        return check_minions(tgt, tgt_type, view.accepted, self.grains.get, self.opts, pillar_of=pillar_of), view

    # ----- starting a job ---------------------------------------------------------------------
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
        acl: list[Any] | None = None,
    ) -> dict[str, Any]:
        """Start a job (loop; targeting runs in the operator's threads).

        Returns ``{"jid", "minions"}`` once the job's row is committed in the job cache and
        ``salt/job/<jid>/new`` is fired; the publishes go out right after.
        ``{"jid": "", "minions": []}`` when no minion matched (nothing is
        stored or sent, as Salt assigns no jid then); ``{"error": ...}`` for a
        bad request. ``acl``: the caller's ``external_auth`` entries (briny-api): unless they
        allow ``fun`` on every matched minion, the answer is an ``unauthorized`` error and
        nothing is stored or sent (:mod:`briny.master.eauthacl`).
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
            minions, view = await self.in_control(self._match, tgt, tgt_type)
        except SaltInvocationError as exc:
            return {"error": str(exc)}
        self.apply_keys(view)
        if acl is not None and not allows_local(acl, fun, minions):
            log.warning(
                "refused: user %s may not run %s on %s (external_auth); nothing was published",
                user, fun, ", ".join(minions[:20]) + (" ..." if len(minions) > 20 else ""),
            )  # fmt: skip
            return {"error": "unauthorized", "message": "Authorization error occurred."}
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
        if cache:  # the job row is committed before any publish goes out (a kill -9 keeps the job)
            try:
                jid = await store_new_job(self.jobcache, load, minions)  # another jid if another master took it
            except (JobCacheError, SaltInvocationError) as exc:
                return {"error": f"the job could not be stored in the job cache: {exc}"}
        self.jobs.add(jid, fun, minions, cache, load)
        log.info("User %s Published command %s with jid %s", load["user"], fun, jid)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("job %s targets %s", jid, ", ".join(minions))
        for tag, data in job_events(load, minions):
            self.fire(tag, data)
        self.spawn(self._send_publishes(load, minions))
        return {"jid": jid, "minions": minions}

    def _timeout(self, timeout: Any) -> float:
        asked = positive(timeout, None)
        if asked is not None:
            return asked
        return config.number(self.opts, "timeout")

    async def find_job(self, jid: Any, minions: Any) -> dict[str, Any]:
        """Ask ``minions`` whether they still run ``jid`` (``saltutil.find_job``)."""
        if not valid_jid(jid):
            return {"error": f"find_job needs a job id of 20 digits, not {str(jid)[:40]!r}"}
        if not isinstance(minions, list) or not all(isinstance(m, str) and valid_id(m) for m in minions):
            return {"error": "find_job needs 'minions', a list of minion ids"}
        if not minions:
            return {"jid": "", "minions": []}
        return await self.publish(minions, "list", "saltutil.find_job", [jid], {}, None, "root", cache=False)

    # ----- sending ----------------------------------------------------------------------------
    def _pub_frame(self, sess: Session, load: dict[str, Any]) -> bytes:
        env = wire.sealed("pub", sess.id, sess.key, load)
        return wire.sign(env, self.sign_key).encode()

    async def _send_publishes(self, load: dict[str, Any], minions: list[str]) -> None:
        """One sealed, signed publish per minion under its own topic (loop). A state job is
        compiled for each minion first (in a worker) and its publish carries ``compiled``."""
        deadline = pending_deadline(time.monotonic(), load)
        compiler = self.compiler if self.compiler is not None and self.compiler.wants(load.get("fun")) else None
        roots = await self.in_worker(compiler.roots_signature) if compiler is not None else None
        plain = load
        for count, minion_id in enumerate(minions, 1):
            load = plain
            if compiler is not None:
                try:
                    compiled = await self.in_worker(compiler.compile_for, minion_id, plain, roots)
                except Exception:  # never lose the job: the minion compiles itself
                    log.exception("compiling job %s for %s failed", plain["jid"], minion_id)
                    compiled = None
                if compiled is not None:
                    load = {**plain, "compiled": compiled}
                    self.jobs.compiled(plain["jid"], minion_id, load)
            sess = self.sessions.get(minion_id)
            if sess is None:
                # not connected right now (a master restart, a reconnect): hand it the job
                # on its first request after it authenticates, if that is soon enough
                self.jobs.wait(minion_id, load, deadline)
                continue
            await self.transport.publish(topic_for(minion_id), self._pub_frame(sess, load))
            self.jobs.sent(minion_id, plain["jid"])
            if count % PUBLISH_TURN == 0:
                await asyncio.sleep(0)

    def deliver_pending(self, sess: Session) -> None:
        """Send ``sess``'s minion the publishes the job book kept for it (loop: after each of its
        requests, once it has a session again)."""
        for payload in self.jobs.take_pending(sess.id):
            log.info("sending job %s to %s again: it had no session, or has not returned it", payload["jid"], sess.id)
            self.jobs.sent(sess.id, payload["jid"])
            self.spawn(self.transport.publish(topic_for(sess.id), self._pub_frame(sess, payload)))
