"""The master's answers to a minion's own requests: ``ping``, ``grains``, ``ret`` and ``event``.

The events they fire (a minion's start, its returns, what it sends) are in Salt's shapes,
built by :mod:`briny.master.busshape`.

Each handler takes the sender's :class:`~briny.master.sessions.Session` and
the opened request payload, and returns the reply payload (``docs/PROTOCOL.md``,
"Requests"); what the sender may make the master store or fire is
:class:`~briny.master.trust.MinionTrust`'s to decide. A malformed request
raises ``WireError`` (the server answers it with an ``error``). The other
requests (``pillar``, ``file_*``, ``compile``) are the subsystems' own
handlers, registered on the server by the daemon.

Threads: **the loop** (registered as not blocking): each handler is a few
dict operations; the job cache's ``save_*`` only queue to its writer
thread (a return's answer, and a minion's own call's job, are awaited
without blocking the loop), and the grains cache writes its files in its
own thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from briny.common.exceptions import JobCacheError, SaltInvocationError, WireError
from briny.common.ids import valid_jid
from briny.common.jid import gen_jid
from briny.common.reported import accept_reported
from briny.master.busshape import minion_event, return_event, start_events
from briny.master.grainscache import GrainsCache
from briny.master.jobbook import JobBook
from briny.master.jobcache.base import RETURN_KEYS, RETURN_WAIT, Committed, JobCache, committed, store_new_job
from briny.master.sessions import Session
from briny.master.trust import MinionTrust

log = logging.getLogger(__name__)

Fire = Callable[[str, dict[str, Any]], None]


def _short(value: str) -> str:
    return value if len(value) <= 64 else value[:61] + "..."


class MinionHandlers:
    """``ping``, ``grains``, ``ret`` and ``event`` (loop); :meth:`register` plugs them in."""

    def __init__(self, book: JobBook, trust: MinionTrust, grains: GrainsCache, jobcache: JobCache, fire: Fire) -> None:
        self.book = book
        self.trust = trust
        self.grains = grains
        self.jobcache = jobcache
        self.fire = fire

    def register(self, server: Any) -> None:
        for cmd, handler in (
            ("ping", self.ping),
            ("grains", self.grains_req),
            ("ret", self.ret),
            ("event", self.event),
        ):
            server.register_handler(cmd, handler, blocking=False)

    def ping(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any]:
        """A heartbeat: the minion is idle, so the jobs it was sent and has not returned go to it
        again after the answer (a publish ZeroMQ dropped: :meth:`JobBook.resend`)."""
        self.book.resend(sess.id)
        return {"ok": True, "time": time.time()}

    def grains_req(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any]:
        """A minion's grains (and its public config) after each auth; the first of a session fires
        ``minion_start`` and ``salt/minion/<id>/start``."""
        grains = payload.get("grains")
        if not isinstance(grains, dict):
            raise WireError("'grains' must be a map")
        self.grains.put(sess.id, grains)
        if "opts" in payload:  # only what templates may read (common/reported.py), size-capped
            self.grains.put_opts(sess.id, accept_reported(payload.get("opts"), sess.id))
        if not sess.started:
            sess.started = True
            for tag, data in start_events(sess.id):
                self.fire(tag, data)
        return {"ok": True}

    def ret(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        jid = payload.get("jid")
        if jid == "req":
            return self._local_return(sess, payload)
        if not isinstance(jid, str) or not valid_jid(jid):
            raise WireError(f"'jid' must be a job id of 20 digits, not {str(jid)[:40]!r}")
        if "return" not in payload:
            raise WireError("a return needs a 'return' field")
        refused = self.trust.not_sent(jid, sess.id)
        if refused is not None:
            log.warning("%s returned for job %s: %s; dropped", sess.id, jid, refused)
            return {"error": refused}
        done = self._store_return(sess, jid, payload)
        self.book.resend(sess.id)  # an earlier job's publish this minion has not returned may have been lost
        return self._taken(done, sess.id, jid, {"ok": True})

    def _taken(
        self, done: Committed | None, minion_id: str, jid: str, reply: dict[str, Any]
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """``reply``, once the return is committed: the minion forgets a return the master took, so
        a master killed right after answering must have it (the server answers when this is done,
        without holding up the loop)."""
        if done is None:
            return reply

        async def when_committed() -> dict[str, Any]:
            try:
                what = f"the return of {minion_id} for job {jid}"
                await committed(self.jobcache, done, what, RETURN_WAIT, quiet=True)
            except JobCacheError:
                pass  # logged; the minion sending it again would fail the same way
            return reply

        return when_committed()

    def _local_return(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """The return of a minion's own call (``briny-call`` through its daemon, or its schedule,
        ``jid: "req"``, as Salt's ``salt-call``): the master makes the job, targeting that minion
        alone, under a jid of its own (claimed as a publish's is, :func:`store_new_job`);
        ``local_jid`` (the minion's) makes a return sent twice one job, to this master or to
        another sharing its job cache (which made the job then, and whose jid is answered)."""
        if "return" not in payload or not isinstance(payload.get("fun"), str):
            raise WireError("a return needs a 'return' field and a 'fun' string")
        local = payload.get("local_jid")
        if local is not None and not valid_jid(local):
            raise WireError(f"'local_jid' must be a job id of 20 digits, not {str(local)[:40]!r}")
        known = self.book.local_jid(sess.id, local) if local else None
        if known is not None:
            return {"ok": True, "jid": known}
        fun_args = payload.get("fun_args")
        load = {
            "jid": gen_jid(),
            "fun": payload["fun"],
            "arg": fun_args if isinstance(fun_args, list) else [],
            "tgt": sess.id,
            "tgt_type": "glob",
            "user": "root",
        }
        if local:
            load["local_jid"] = local
        return self._local_job(sess, payload, load, local)

    async def _local_job(
        self, sess: Session, payload: dict[str, Any], load: dict[str, Any], local: str | None
    ) -> dict[str, Any]:
        """The job of a minion's own call stored (or found: another master made it), then its return."""
        try:
            jid = await store_new_job(self.jobcache, load, [sess.id], call=(sess.id, local) if local else None)
        except (JobCacheError, SaltInvocationError) as exc:
            log.error("the local call %s of %s was not stored: %s", local, sess.id, exc)
            return {"error": f"the master could not store the call: {exc}"}
        if local:
            self.book.remember_local(sess.id, local, jid)
        reply = self._taken(self._store_return(sess, jid, payload), sess.id, jid, {"ok": True, "jid": jid})
        return await reply if not isinstance(reply, dict) else reply

    def _store_return(self, sess: Session, jid: str, payload: dict[str, Any]) -> Committed | None:
        """Store a checked return (unless its job is a probe kept out of the cache) and fire it; the
        write's future (None when nothing is written)."""
        job = self.book.get(jid)
        record = {k: payload[k] for k in RETURN_KEYS if k in payload}
        log.info("Got return from %s for job %s", sess.id, jid)
        done: Committed | None = None
        if job is None or job.cached:
            try:
                done = self.jobcache.save_return(jid, sess.id, record)
            except (JobCacheError, SaltInvocationError) as exc:
                log.error("the return of %s for job %s was not stored: %s", sess.id, jid, exc)
        self.book.returned(jid, sess.id)
        user = (job.load or {}).get("user") if job is not None else None
        self.fire(f"salt/job/{jid}/ret/{sess.id}", return_event(sess.id, jid, payload, record, user))
        return done

    def event(self, sess: Session, payload: dict[str, Any]) -> dict[str, Any]:
        verdict = self.trust.event(sess.id, payload)  # WireError: refused (logged, answered)
        if verdict.refused is not None:
            log.warning("%s fired %r: %s; dropped", sess.id, _short(verdict.tag), verdict.refused)
            return {"error": verdict.refused}
        self.fire(verdict.tag, minion_event(sess.id, verdict.tag, verdict.data, payload.get("jid")))
        return {"ok": True}
