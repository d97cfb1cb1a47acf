"""The master's book of recent jobs, and the publishes waiting for a minion to come back.

What the master remembers in memory of the jobs of the last
:data:`JOB_MEMORY` seconds (the returns themselves go to the job cache):
whom each job targets and who returned, the publish to hand again to a
minion that re-authenticates (with its per-minion compile), and the jobs
made for minions' own calls (``briny-call`` through a daemon), by the
minion's jid.

The pending book: a publish for a minion without a session (a master
restart, a reconnect) waits until the minion's first request after it
authenticates, for at least :data:`PENDING_MIN` seconds or the job's
timeout; a minion that authenticates again while it had a session (it
restarted, or lost the master for a while) cannot open what was sealed with
its old key, so the jobs published since it was last heard from that it has
not returned are queued for it again (:meth:`JobBook.requeue`); the minion
takes each jid once, across its own restarts (:mod:`briny.minion.takenjids`),
so a job it was killed in is not run twice.

A publish ZeroMQ dropped: the master's PUB socket queues at most ``pub_hwm`` publishes per
subscriber connection and drops, without a word, one for a connection whose queue is full. So the
book remembers, per minion, the publishes sent to it that it has not returned; when the minion
pings (it does after ``ping_interval`` seconds without an answered request: an idle minion, as one
that missed its job is) or returns another job, those sent at least :data:`RESEND_AFTER` seconds
before (and not sent again within it) and still fresh are queued for it again
(:meth:`JobBook.resend`), and it takes only the jids it has not taken: a job it still runs is
sent again at most once a :data:`RESEND_AFTER`, and ignored.

Threads: **the loop only**; every method that changes the book checks it
with :func:`briny.common.onloop.assert_on_loop`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from briny.common.onloop import assert_on_loop

log = logging.getLogger(__name__)

JOB_MEMORY = 3600.0  # seconds a job's bookkeeping is kept in memory
PENDING_MIN = 10.0  # a publish waits at least this long for a minion to (re)authenticate
RESEND_AFTER = 1.0  # seconds after its publish an unreturned job is handed again on a ping
WHAT = "the master's job book"


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
class PendingPub:
    deadline: float  # monotonic
    payload: dict[str, Any]


def pending_deadline(created: float, load: dict[str, Any]) -> float:
    """Until when a publish made at ``created`` may still be handed to a minion that comes back."""
    return created + max(PENDING_MIN, float(load.get("timeout") or 0))


class JobBook:
    """Recent jobs by jid, publishes waiting per minion, minions' own calls (loop only)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._jobs: dict[str, Job] = {}
        self._pending: dict[str, list[PendingPub]] = {}
        self._local: dict[tuple[str, str], tuple[str, float]] = {}  # (id, its jid) -> (jid, made)
        self._sent: dict[str, dict[str, float]] = {}  # id -> {jid: when sent} of jobs it has not returned

    # -- reads ------------------------------------------------------------------------------------
    def get(self, jid: str) -> Job | None:
        return self._jobs.get(jid)

    def __contains__(self, jid: object) -> bool:
        return jid in self._jobs

    def __len__(self) -> int:
        return len(self._jobs)

    def local_jid(self, minion_id: str, local: str) -> str | None:
        """The master's jid for a minion's own call ``local`` (its jid), if it was seen."""
        known = self._local.get((minion_id, local))
        return known[0] if known is not None else None

    def waiting(self, minion_id: str) -> list[str]:
        """The jids waiting for ``minion_id`` (tests, logs)."""
        return [p.payload["jid"] for p in self._pending.get(minion_id, [])]

    # -- jobs -------------------------------------------------------------------------------------
    def add(self, jid: str, fun: str, minions: list[str], cached: bool, load: dict[str, Any]) -> Job:
        assert_on_loop(WHAT)
        job = Job(jid, fun, set(minions), self.clock(), cached, load=load)
        self._jobs[jid] = job
        return job

    def returned(self, jid: str, minion_id: str) -> None:
        assert_on_loop(WHAT)
        job = self._jobs.get(jid)
        sent = self._sent.get(minion_id)
        if sent is not None:
            sent.pop(jid, None)
            if not sent:
                del self._sent[minion_id]
        if job is not None:
            job.returned.add(minion_id)
            # a minion that returned is never handed the job again: its compile can go now
            # (kept, it would cost ~20 KB a minion for an hour per state job: 5,000 minions, 100 MB)
            job.loads.pop(minion_id, None)

    def compiled(self, jid: str, minion_id: str, load: dict[str, Any]) -> None:
        """The publish of ``jid`` for ``minion_id`` with its compile (handed again after a re-auth)."""
        assert_on_loop(WHAT)
        job = self._jobs.get(jid)
        if job is not None:
            job.loads[minion_id] = load

    def remember_local(self, minion_id: str, local: str, jid: str) -> None:
        assert_on_loop(WHAT)
        self._local[(minion_id, local)] = (jid, self.clock())

    def clear(self) -> None:
        """Forget every job (as after :data:`JOB_MEMORY`)."""
        assert_on_loop(WHAT)
        self._jobs.clear()
        self._sent.clear()

    # -- the pending book -------------------------------------------------------------------------
    def wait(self, minion_id: str, load: dict[str, Any], deadline: float) -> None:
        """Keep a publish for ``minion_id``, which has no session now, until ``deadline``."""
        assert_on_loop(WHAT)
        self._pending.setdefault(minion_id, []).append(PendingPub(deadline, load))
        log.debug("%s has no session; job %s waits for it", minion_id, load["jid"])

    def requeue(self, minion_id: str, heard: float) -> None:
        """``minion_id`` authenticated again while it had a session: queue the recent jobs
        published since it was last heard from (``heard``) that it has not returned (it ignores
        jids it already took, even before a restart). Jobs from before that were sent while it was
        alive and are not handed again."""
        assert_on_loop(WHAT)
        now = self.clock()
        waiting = self._pending.setdefault(minion_id, [])
        queued = {p.payload.get("jid") for p in waiting}
        for job in self._jobs.values():
            if job.load is None or minion_id not in job.minions or minion_id in job.returned or job.created < heard:
                continue
            deadline = pending_deadline(job.created, job.load)
            if deadline >= now and job.jid not in queued:
                waiting.append(PendingPub(deadline, job.loads.get(minion_id, job.load)))
        if not waiting:
            del self._pending[minion_id]

    def sent(self, minion_id: str, jid: str) -> None:
        """The publish of ``jid`` went to ``minion_id``'s topic (ZeroMQ may still drop it)."""
        assert_on_loop(WHAT)
        self._sent.setdefault(minion_id, {})[jid] = self.clock()

    def resend(self, minion_id: str) -> None:
        """``minion_id`` pinged or returned a job: queue again the fresh jobs sent to it at least
        :data:`RESEND_AFTER` seconds ago that it has not returned (see the module docstring)."""
        assert_on_loop(WHAT)
        sent = self._sent.get(minion_id)
        if not sent:
            return
        now = self.clock()
        waiting = self._pending.setdefault(minion_id, [])
        queued = {p.payload.get("jid") for p in waiting}
        for jid, at in list(sent.items()):
            fresh = self._fresh(jid, minion_id, now)
            if fresh is None:
                del sent[jid]
            elif now - at >= RESEND_AFTER and jid not in queued:
                waiting.append(fresh)
        if not sent:
            del self._sent[minion_id]
        if not waiting:
            del self._pending[minion_id]

    def _fresh(self, jid: str, minion_id: str, now: float) -> PendingPub | None:
        """``jid``'s publish for ``minion_id`` with its deadline, while it may still be handed."""
        job = self._jobs.get(jid)
        if job is None or job.load is None:
            return None
        deadline = pending_deadline(job.created, job.load)
        return PendingPub(deadline, job.loads.get(minion_id, job.load)) if deadline >= now else None

    def take_pending(self, minion_id: str) -> list[dict[str, Any]]:
        """The publishes still fresh that wait for ``minion_id``; they leave the book."""
        assert_on_loop(WHAT)
        waiting = self._pending.pop(minion_id, None)
        if not waiting:
            return []
        now = self.clock()
        return [p.payload for p in waiting if p.deadline >= now]

    def drop_pending(self, minion_id: str) -> None:
        assert_on_loop(WHAT)
        self._pending.pop(minion_id, None)

    # -- housekeeping -----------------------------------------------------------------------------
    def expire(self) -> None:
        """Forget jobs and local calls older than :data:`JOB_MEMORY`, and publishes past their
        deadline."""
        assert_on_loop(WHAT)
        now = self.clock()
        for jid in [j for j, job in self._jobs.items() if now - job.created > JOB_MEMORY]:
            del self._jobs[jid]
        for job in self._jobs.values():
            if job.loads and job.load is not None and pending_deadline(job.created, job.load) < now:
                job.loads.clear()  # too old to be handed again (requeue): the per-minion compiles go
        for minion_id, sent in list(self._sent.items()):
            for jid in list(sent):
                if self._fresh(jid, minion_id, now) is None:
                    del sent[jid]
            if not sent:
                del self._sent[minion_id]
        for key in [k for k, (_, made) in self._local.items() if now - made > JOB_MEMORY]:
            del self._local[key]
        for minion_id in list(self._pending):
            kept = [p for p in self._pending[minion_id] if p.deadline >= now]
            if kept:
                self._pending[minion_id] = kept
            else:
                del self._pending[minion_id]
