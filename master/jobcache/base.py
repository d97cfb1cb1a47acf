"""The master's job cache: the interface, its records, and the backend factory.

Runs on the master host: the master daemon writes every job it publishes
(the load and the targeted minions) and every return; ``briny-run jobs.*``
and the client API read it, from other processes, while jobs run.

The store sits behind :class:`JobCache`: SQLite (:mod:`briny.master.jobcache.sqlite`,
the default) or PostgreSQL (:mod:`briny.master.jobcache.pg`, several masters sharing
one cache); what they share, the writes and reads in SQL, is :mod:`briny.master.jobcache.sql` (its
writer thread :mod:`briny.master.jobcache.writer`). The data is
Salt's local job cache's:

- a job's *load* is the dict the master publishes (``jid``, ``fun``,
  ``arg``, ``tgt``, ``tgt_type``, ``user``, ``kwargs``, ...);
- a *return* is what Salt keeps of a minion's return load: ``return`` and,
  when present, ``retcode``, ``success`` and ``out`` (the outputter name);
  a bare value is stored as ``{"return": value}``. The first return of a
  minion for a jid is kept; a duplicate is logged and dropped, as Salt does.

Writes are asynchronous: ``save_*`` return at once and one writer applies
them in order; :meth:`JobCache.flush` waits until everything queued is
written (the daemon calls it, or :meth:`JobCache.close`, before exit so
in-flight returns are not lost). Reads see what the writer has committed.

A job's row must be committed before its publish goes out, or a master killed
right after publishing (``kill -9``) would refuse the job's returns once it is
back ("not a job of this master"), and a return must be committed before the
minion is told it was taken (it forgets it then): :meth:`JobCache.save_load` and
:meth:`JobCache.save_return` return a future the writer resolves once the write
is committed, and :func:`committed` is how the master's loop waits for it (see
``docs/scaling.md``, "Durability").

Usage (the daemon)::

    cache = open_job_cache(opts)            # SqliteJobCache(cachedir/jobs.sqlite)
    await committed(cache, cache.save_load(jid, load, minions), f"job {jid}")   # before publishing
    await committed(cache, cache.save_return(jid, minion_id, ret_load), ...)  # before answering
    ...
    cache.prune(opts["keep_jobs"])          # now and then (hourly)
    cache.close()                           # flushes first
"""

from __future__ import annotations

import abc
import asyncio
import concurrent.futures
import datetime
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from briny.common.exceptions import JobCacheError
from briny.common import config
from briny.common.ids import check_id, check_jid
from briny.common.jid import gen_jid

log = logging.getLogger(__name__)

RETURN_KEYS = ("return", "retcode", "success", "out")
JID_TRIES = 5  # jids minted for one job at most when each is found taken (store_new_job)
DB_NAME = "jobs.sqlite"
COMMIT_WAIT = 10.0  # seconds a publish waits for its job row while the database answers
RETURN_WAIT = 1.0  # seconds a return's answer waits for its commit (well within a minion's auth_timeout)

Committed = concurrent.futures.Future[Any]  # resolved once a write is committed (an error when it failed)
Call = tuple[str, str] | None  # a minion's own call: (its id, its jid); see JobCache.save_load


@dataclass
class JobRecord:
    """One job as ``list_jobs`` gives it: the indexed columns and the whole load."""

    jid: str
    fun: str
    tgt: Any
    tgt_type: str
    user: str
    started: float  # epoch seconds of the jid's time (when the master made the job)
    load: dict[str, Any] = field(default_factory=dict)
    minions: list[str] | None = None  # targeted minions, None when unknown


@dataclass
class EventRecord:
    """One stored event (``event_return: job_cache``, :mod:`briny.master.eventreturn`)."""

    id: int  # increasing in the order the master stored them
    tag: str
    data: dict[str, Any]  # as fired (with ``_stamp``), through JSON
    stamp: float  # epoch seconds when the master's bus carried it
    master_id: str  # the ``id`` of the master that stored it


def return_record(ret: Any) -> dict[str, Any]:
    """What the cache keeps of a minion's return load (Salt's return.p keys)."""
    if isinstance(ret, dict) and "return" in ret:
        return {k: ret[k] for k in RETURN_KEYS if k in ret}
    return {"return": ret}


def load_columns(load: dict[str, Any]) -> tuple[str, str, str, str]:
    """(fun, tgt, tgt_type, user) of a load as indexed text columns."""
    tgt = load.get("tgt", "")
    if isinstance(tgt, (list, tuple)):
        tgt = ",".join(str(t) for t in tgt)
    return (
        str(load.get("fun", "") or ""),
        str(tgt or ""),
        str(load.get("tgt_type", "glob") or "glob"),
        str(load.get("user", "root") or "root"),
    )


def jid_time(jid: str) -> float | None:
    """Epoch seconds of a jid's local timestamp, or None when it is not a jid."""
    try:
        stamp = datetime.datetime.strptime(jid[:20], "%Y%m%d%H%M%S%f")
    except (ValueError, TypeError):
        return None
    return stamp.timestamp()


class JobCache(abc.ABC):
    """The job cache interface; see the module docstring."""

    # ----- writes (queued, return at once) ---------------------------------------------------
    @abc.abstractmethod
    def save_load(
        self, jid: str, load: dict[str, Any], minions: list[str] | None = None, *, new: bool = False, call: Call = None
    ) -> Committed:
        """Store a job's load (and the minions it targets, when known); the future is resolved
        once the row is committed (the job survives a master killed from then on), to True.

        ``new``: the jid was just minted for this job and is claimed, never taken over: when
        another job already holds it (another master sharing the cache minted it too), nothing
        is written and the future resolves to False; else to the jid the job is stored under.
        ``call`` (with ``new``): the job is a minion's own call, ``(minion id, the minion's
        jid)``; when a master sharing the cache (or this one, before a restart) already made the
        job of that call, nothing is written and the future resolves to that job's jid. See
        :func:`store_new_job`."""

    @property
    def degraded(self) -> bool:
        """True while the writer cannot reach the database (it buffers: nothing is committed now)."""
        return False

    @abc.abstractmethod
    def save_minions(self, jid: str, minions: list[str]) -> None:
        """Add targeted minions to a job (merged with those already stored)."""

    @abc.abstractmethod
    def save_return(self, jid: str, minion_id: str, ret: Any) -> Committed:
        """Store one minion's return for a job (the first one wins); the future is resolved once it
        is committed (the master answers the minion then: the return survives a master killed)."""

    @abc.abstractmethod
    def save_event(self, tag: str, data: dict[str, Any], master_id: str) -> bool:
        """Queue one event of the master's bus (``event_return: job_cache``); never blocks, never
        raises. False when it was dropped: the cache is closed or ``buffer_max`` events wait already."""

    @abc.abstractmethod
    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued write is committed; False on timeout."""

    @abc.abstractmethod
    def prune(self, keep_hours: float) -> int:
        """Remove jobs (and their returns) older than ``keep_hours`` by their jid time; 0 keeps all.

        Returns how many jobs were removed. Returns of unknown jobs, and stored events, go after
        the same time.
        """

    @abc.abstractmethod
    def close(self, timeout: float | None = None) -> None:
        """Flush (waiting at most ``timeout``; the writes still queued then are lost, and logged), stop the
        writer and release connections."""

    # ----- reads -----------------------------------------------------------------------------
    @abc.abstractmethod
    def get_load(self, jid: str) -> dict[str, Any]:
        """The load, with ``Minions`` (sorted) when known; ``{}`` for an unknown jid (as Salt)."""

    @abc.abstractmethod
    def get_returns(self, jid: str) -> dict[str, dict[str, Any]]:
        """``{minion_id: {"return": ..., "retcode": ..., "success": ..., "out": ...}}``."""

    @abc.abstractmethod
    def get_minions(self, jid: str) -> list[str]:
        """The targeted minions, sorted (``[]`` when unknown)."""

    @abc.abstractmethod
    def targeted(self, jid: str, minion_id: str) -> bool | None:
        """Whether the job targets ``minion_id`` (one indexed lookup, nothing decoded); None when
        the cache has no such job. The master asks before it stores a return it does not
        remember publishing (after a restart, or once its in-memory job record expired)."""

    @abc.abstractmethod
    def returned_ids(self, jid: str) -> list[str]:
        """Ids of the minions that returned, sorted (no return data decoded)."""

    @abc.abstractmethod
    def list_jobs(
        self,
        *,
        start_time: float | None = None,
        end_time: float | None = None,
        functions: list[str] | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[JobRecord]:
        """Jobs in jid order; ``functions`` are globs; ``limit`` keeps the newest ones."""

    @abc.abstractmethod
    def list_events(
        self, *, tag: str | None = None, since: float | None = None, limit: int | None = None
    ) -> list[EventRecord]:
        """Stored events, oldest first: ``tag`` a glob, ``since`` epoch seconds (inclusive),
        ``limit`` keeps the newest ones."""

    # ----- helpers shared by the backends ----------------------------------------------------
    def missing(self, jid: str) -> list[str]:
        """Targeted minions that have not returned."""
        returned = set(self.returned_ids(jid))
        return [m for m in self.get_minions(jid) if m not in returned]

    def __enter__(self) -> "JobCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _checked(jid: str, minion_id: str | None = None) -> None:
        check_jid(jid)
        if minion_id is not None:
            check_id(minion_id)


def cache_path(opts: dict[str, Any]) -> str:
    return os.path.join(str(config.setting(opts, "cachedir", "master")), DB_NAME)


def keep_hours(opts: dict[str, Any]) -> float:
    """Salt's retention: ``keep_jobs_seconds`` when set, else ``keep_jobs`` hours (24)."""
    seconds = opts.get("keep_jobs_seconds")
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds >= 0:
        return seconds / 3600.0
    return config.number(opts, "keep_jobs", zero=True)


# Salt's master_job_cache returners that keep jobs in PostgreSQL: briny's job_cache: postgres
SALT_PG_CACHES = frozenset({"pgjsonb", "postgres", "postgres_local_cache"})


def backend(opts: dict[str, Any], *, warn: bool = False) -> str:
    """The job cache backend a master config names: ``job_cache`` (``sqlite``, the default, or
    ``postgres``), read with Salt's keys too: ``job_cache: True`` (Salt's default: keep a job
    cache) is the default backend, ``job_cache: False`` (Salt: keep none) cannot be honoured (the
    master checks returns against its job cache) and is warned about, and ``master_job_cache:
    pgjsonb`` / ``postgres`` / ``postgres_local_cache`` with the default backend is ``postgres``
    (warned: the connection is ``postgres.*``). Another ``master_job_cache`` is named in a
    warning. ``warn``: say so in the log (the daemon, once at start)."""
    value = config.setting(opts, "job_cache")
    if value is False and warn:
        log.warning("job_cache: False (Salt: keep no job cache) is not supported: briny keeps its job cache")
    kind = "sqlite" if isinstance(value, bool) else str(value).lower()
    salt_cache = opts.get("master_job_cache")
    if salt_cache and kind == "sqlite" and salt_cache != "local_cache":
        if salt_cache in SALT_PG_CACHES:
            if warn:
                log.warning(
                    "master_job_cache: %s is read as job_cache: postgres (connection from postgres.dsn or "
                    "postgres.host/port/db/user/passwd)",
                    salt_cache,
                )
            return "postgres"
        if warn:
            log.warning("master_job_cache: %s is not supported; the job cache is briny's SQLite one", salt_cache)
    return kind


def now() -> float:
    return time.time()


def _late(waiting: asyncio.Future[Any]) -> None:
    """A job row committed (or failed) after its publish stopped waiting: the outcome is logged."""
    if not waiting.cancelled() and waiting.exception() is not None:
        log.error("a job row was not written: %s", waiting.exception())


async def committed(
    cache: JobCache, done: Committed, what: str, wait: float = COMMIT_WAIT, *, quiet: bool = False
) -> Any:
    """Wait (loop, without blocking it) until the write of ``what`` (``job <jid>``, ``the return of
    <id> for job <jid>``) is committed: the writer thread resolves ``done``. While the database is
    away (:attr:`JobCache.degraded`), or when ``wait`` seconds pass first, the master goes ahead
    with the write still buffered, and the log says so (unless ``quiet``: a return's, one of
    thousands, where the writer's own log of the outage says enough): a master killed before the
    buffer is written loses it. Raises :class:`JobCacheError` when the write failed.
    """
    if not cache.degraded:
        waiting = asyncio.wrap_future(done)
        finished, _ = await asyncio.wait([waiting], timeout=wait)  # never cancels the write
        if finished:
            error = waiting.exception()
            if error is None:
                return waiting.result()
            if not isinstance(error, JobCacheError):
                log.error("%s was not written: %s", what, error)
            raise JobCacheError(str(error)) from error
        waiting.add_done_callback(_late)
        why = f"the job cache did not commit it within {wait:g} s"
    else:
        why = "the job cache database is unreachable"
    if quiet:
        log.debug("%s is not committed yet (%s); going on without it", what, why)
        return None
    log.warning("%s is not committed yet (%s); going on without it: a master killed before then loses it", what, why)
    return None


async def store_new_job(
    cache: JobCache,
    load: dict[str, Any],
    minions: list[str],
    mint: Callable[[], str] = gen_jid,
    *,
    call: Call = None,
) -> str:
    """Commit the row of a new job under ``load["jid"]`` (loop) and return its jid: when another
    job already holds that jid (another master sharing the job cache minted it in the same
    microsecond), a new one is minted into ``load`` and tried, at most :data:`JID_TRIES` times
    (JobCacheError then). Every job row a master makes under a jid it minted goes through here
    (publishes, its schedule, orchestrations, minions' own calls), so no job's load is ever
    written over another's. ``call``: a minion's own call (:meth:`JobCache.save_load`); when
    its job exists already, that job's jid is returned (into ``load`` too) and nothing is
    written. When the master goes ahead without the commit (:func:`committed`), the jid is not
    checked: a buffered row that finds it taken is dropped with a warning."""
    jid = str(load["jid"])
    for _ in range(JID_TRIES):
        done = cache.save_load(jid, load, minions, new=True, call=call)
        stored = await committed(cache, done, f"job {jid}")
        if stored is not False:
            if isinstance(stored, str) and stored != jid:  # the minion's call is that job already
                jid = load["jid"] = stored
            return jid
        log.info("jid %s is another job's already (another master's): minting a new one", jid)
        jid = load["jid"] = mint()
    raise JobCacheError(f"no free jid after {JID_TRIES} tries (the last was {jid})")


def store_new_job_sync(
    cache: JobCache, load: dict[str, Any], minions: list[str], mint: Callable[[], str] = gen_jid
) -> str:
    """:func:`store_new_job` from a thread that runs no event loop (a scheduled runner's thread,
    ``briny-run``'s orchestration), waiting for the commit as it does."""
    return asyncio.run(store_new_job(cache, load, minions, mint))
