"""What the SQL job cache backends share: the batching writer and every read (the rows and their
encoding are :mod:`briny.master.jobrows`).

Runs on the master host, under :mod:`briny.master.jobcache_sqlite` (the default) and
:mod:`briny.master.jobcache_pg` (``job_cache: postgres``). Both keep the same tables
(``jobs``, ``returns``, ``job_minions``, ``local_jobs``, ``events``: see the backends' ``SCHEMA``)
with the loads, targets and return records as msgpack blobs and the events as JSON, so the
reads, the prune and the merge of targeted minions are written once, here, in the SQL both
engines speak (``?`` marks a parameter; a backend whose driver wants another style rewrites it
in :meth:`_sql`). A job row under a jid just minted is only ever inserted, never written over
another's (``new``, :meth:`SqlJobCache.save_load`), and a minion's own call is one job
(``local_jobs``).

Writes go through a queue to one writer thread that owns the only writing connection;
it takes what is queued (up to :data:`BATCH_MAX` writes) and applies it in one
transaction, the returns of the batch in one call to the backend's
:meth:`SqlJobCache._insert_returns` and its events in one call to :meth:`SqlJobCache._insert_events`
(PostgreSQL: one statement for each). Events (``event_return: job_cache``) come from the bus's
thread and must never wait: at most ``buffer_max`` of them are queued or held at once, those beyond
are dropped, counted and logged (once a minute).
When the backend says a failure is transient (:meth:`SqlJobCache._transient`: the
database went away), the writer keeps the batch, logs, reconnects with a back-off and
applies it again; writes queued meanwhile wait behind it, up to ``buffer_max`` of
them (beyond that the oldest are dropped, and the log says how many).
"""

from __future__ import annotations

import abc
import concurrent.futures
import contextlib
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from briny.common.exceptions import JobCacheError
from briny.master.jobcache import (
    Call,
    Committed,
    EventRecord,
    JobCache,
    JobRecord,
    jid_time,
    load_columns,
    return_record,
)
from briny.master.jobrows import EventRow, ReturnRow, event_json, int_or_none, pack, unpack

log = logging.getLogger(__name__)

_INSERT_JOB = (
    'INSERT INTO jobs (jid, fun, tgt, tgt_type, "user", started, load, minions) VALUES (?, ?, ?, ?, ?, ?, ?, NULL) '
)
SAVE_JOB = (  # a job's load, stored again for the same job: its columns are updated
    _INSERT_JOB + "ON CONFLICT (jid) DO UPDATE SET fun = excluded.fun, tgt = excluded.tgt, "
    'tgt_type = excluded.tgt_type, "user" = excluded."user", load = excluded.load'
)
NEW_JOB = _INSERT_JOB + "ON CONFLICT (jid) DO NOTHING"  # a jid just minted: another job's row stays
# a minion's own call (its id, its jid) -> the master's job of it: made once, whichever master gets it first
NEW_LOCAL_JOB = "INSERT INTO local_jobs (minion_id, local_jid, jid) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
LOCAL_JOB = "SELECT jid FROM local_jobs WHERE minion_id = ? AND local_jid = ?"

BATCH_MAX = 500
BUFFER_MAX = 100_000  # writes held while the database is away
RETRY_MAX = 5.0  # seconds between reconnection attempts, at most
OUTAGE_LOG_EVERY = 60.0  # seconds between the writer's "the database is unreachable" warnings
_STOP = object()

Op = Callable[[Any], Any]


class SqlJobCache(JobCache):
    """The job cache over a SQL database; a backend supplies the connections and the dialect."""

    #: the driver's exception base class (what a failed statement raises)
    db_error: type[Exception] = Exception

    def __init__(self, *, readonly: bool = False, buffer_max: int = BUFFER_MAX) -> None:
        self.readonly = readonly
        self.buffer_max = buffer_max
        self._local = threading.local()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._readers: list[Any] = []
        self._readers_lock = threading.Lock()
        self._outage_logged = float("-inf")  # when the writer last said the database is away
        self._degraded = False  # the writer is holding writes the database did not take
        self.batches = 0  # transactions the writer committed (the tests count them)
        self._events_lock = threading.Lock()
        self._events_waiting = 0  # events queued or held, not written yet (at most buffer_max)
        self.events_dropped = 0  # events not stored: more than buffer_max were waiting
        self._events_logged = float("-inf")

    def _start_writer(self) -> None:
        self._thread = threading.Thread(target=self._writer, name="briny-jobcache-writer", daemon=True)
        self._thread.start()

    # ----- what a backend supplies -----------------------------------------------------------
    @abc.abstractmethod
    def _write_connection(self) -> Any:
        """A new connection for the writer (autocommit off or explicit BEGIN in :meth:`_begin`)."""

    @abc.abstractmethod
    def _read_connection(self) -> Any | None:
        """A new connection for reads in this thread; None when there is nothing to read yet."""

    @abc.abstractmethod
    def _begin(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def _commit(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def _rollback(self, conn: Any) -> None: ...

    @abc.abstractmethod
    def _insert_returns(self, conn: Any, rows: list[ReturnRow]) -> set[tuple[str, str]]:
        """Insert the rows that are not there yet; the (jid, minion_id) of those inserted."""

    @abc.abstractmethod
    def _insert_events(self, conn: Any, rows: list[tuple[str, str, float, str]]) -> None:
        """Insert events, each ``(tag, data as JSON text, stamp, master_id)``, in this order."""

    @abc.abstractmethod
    def _glob(self, column: str, pattern: str) -> tuple[str, Any]:
        """A condition matching ``column`` against a shell glob, and its parameter."""

    def _sql(self, sql: str) -> str:
        """``sql`` in the driver's parameter style (written with ``?``)."""
        return sql

    def _transient(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the database is away for now (the writer keeps the batch)."""
        return False

    def _missing_table(self, exc: BaseException) -> bool:
        """Whether ``exc`` says a table does not exist (a read-only look before the master made it)."""
        return False

    def _savepoint(self, conn: Any) -> contextlib.AbstractContextManager[Any]:
        """Where one write of a batch runs, so its failure leaves the others (default: nothing)."""
        return contextlib.nullcontext()

    def _exec(self, conn: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return conn.execute(self._sql(sql), params)

    # ----- the writer ------------------------------------------------------------------------
    def _writer(self) -> None:
        conn: Any = None
        pending: list[Any] = []
        delay = 0.1
        try:
            while True:
                if not pending:
                    pending.append(self._queue.get())
                while len(pending) < BATCH_MAX:
                    try:
                        pending.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                try:
                    if conn is None:
                        conn = self._write_connection()
                    stop = self._apply(conn, pending)
                except Exception as exc:
                    if not self._transient(exc):
                        raise
                    self._drop(conn)
                    conn = None
                    self._degraded = True
                    self._hold(pending, exc)
                    time.sleep(delay)  # the back-off between reconnection attempts
                    delay = min(delay * 2, RETRY_MAX)
                    continue
                self._degraded = False
                if delay > 0.1:
                    self._outage_logged = float("-inf")
                    log.warning("job cache: the database is back; the buffered writes are written")
                delay = 0.1
                pending = []
                if stop:
                    return
        finally:
            self._drop(conn)

    def _drop(self, conn: Any) -> None:
        if conn is not None:
            try:
                conn.close()
            except self.db_error as exc:
                log.debug("job cache: closing a connection: %s", exc)
        return None

    def _hold(self, pending: list[Any], exc: BaseException) -> None:
        """Keep the writes of a failed batch and those queued since, within ``buffer_max``: the oldest
        events go first, then the oldest other writes."""
        while True:
            try:
                pending.append(self._queue.get_nowait())
            except queue.Empty:
                break
        excess = len(pending) - self.buffer_max
        if excess > 0:
            kept = []
            for item in pending:
                if excess > 0 and item is not _STOP and isinstance(item[0], EventRow):
                    excess -= 1
                    self._events_lost(1)
                    self._events_written(1)
                    continue
                kept.append(item)
            if len(kept) < len(pending):
                log.error(
                    "job cache: the database is unreachable and the buffer is full (%d writes): %d oldest events dropped",
                    self.buffer_max,
                    len(pending) - len(kept),
                )
            pending[:] = kept
        dropped = 0
        while len(pending) > self.buffer_max:
            item = pending.pop(0)
            if item is _STOP:
                pending.append(item)
                continue
            dropped += 1
            if item[1] is not None:
                item[1].set_exception(JobCacheError("dropped: the job cache buffer was full"))
        if dropped:
            log.error(
                "job cache: the database is unreachable and the buffer is full (%d writes): %d oldest writes dropped",
                self.buffer_max,
                dropped,
            )
        now = time.monotonic()
        if now - self._outage_logged >= OUTAGE_LOG_EVERY:  # the first failure, then once a minute
            self._outage_logged = now
            log.warning("job cache: the database is unreachable (%s); %d writes buffered, retrying", exc, len(pending))

    def _apply(self, conn: Any, batch: list[Any]) -> bool:
        """Run a batch in one transaction; resolve the futures after the commit.

        Raises what :meth:`_transient` calls transient (the caller keeps the batch); other
        failures fail the writes concerned and are logged.
        """
        stop = False
        done: list[tuple[concurrent.futures.Future[Any] | None, Any, BaseException | None]] = []
        rows: list[ReturnRow] = []
        events: list[tuple[str, str, float, str]] = []
        self._begin(conn)
        for item in batch:
            if item is _STOP:
                stop = True
                continue
            op, fut = item
            if isinstance(op, ReturnRow):
                rows.append(op)
                done.append((fut, None, None))
                continue
            if isinstance(op, EventRow):
                events.append((op.tag, event_json(op.data), op.stamp, op.master_id))
                continue
            try:
                with self._savepoint(conn):
                    result = op(conn) if op is not None else None
            except (self.db_error, ValueError, TypeError) as exc:
                if self._transient(exc):
                    raise
                log.error("job cache write failed: %s", exc)
                done.append((fut, None, exc))
            else:
                done.append((fut, result, None))
        try:
            if rows:
                inserted = self._insert_returns(conn, rows)
                for row in rows:
                    if (row.jid, row.minion_id) not in inserted:
                        log.warning(
                            "job cache: a second return of %s for job %s was dropped (the first one is kept)",
                            row.minion_id,
                            row.jid,
                        )
                    else:
                        inserted.discard((row.jid, row.minion_id))  # a duplicate in the same batch
            if events:
                self._store_events(conn, events)
            self._commit(conn)
        except self.db_error as exc:
            if self._transient(exc):
                raise
            log.error("job cache: commit failed, %d writes lost: %s", len(batch), exc)
            self._rollback(conn)
            self._events_written(len(events))
            for fut, _, _ in done:
                if fut is not None and not fut.done():
                    fut.set_exception(exc)
            return stop
        self.batches += 1
        self._events_written(len(events))
        for fut, result, error in done:
            if fut is None:
                continue
            if error is not None:
                fut.set_exception(error)
            else:
                fut.set_result(result)
        return stop

    def _store_events(self, conn: Any, events: list[tuple[str, str, float, str]]) -> None:
        """Insert the events of a batch; one the database refuses costs the batch's events, never
        its jobs and returns (they are in the same transaction)."""
        try:
            with self._savepoint(conn):
                self._insert_events(conn, events)
        except self.db_error as exc:
            if self._transient(exc):
                raise
            self._events_lost(len(events))
            log.error("job cache: %d events not stored (the database refused them): %s", len(events), exc)

    def _events_lost(self, count: int) -> None:
        with self._events_lock:
            self.events_dropped += count

    def _events_written(self, count: int) -> None:
        if count:
            with self._events_lock:
                self._events_waiting -= count

    def _submit(self, op: Op | ReturnRow | None) -> concurrent.futures.Future[Any]:
        if self.readonly:
            raise JobCacheError("this job cache was opened read-only")
        if self._closed:
            raise JobCacheError("the job cache is closed")
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((op, fut))
        return fut

    # ----- writes ----------------------------------------------------------------------------
    @property
    def degraded(self) -> bool:
        return self._degraded

    def save_load(
        self, jid: str, load: dict[str, Any], minions: list[str] | None = None, *, new: bool = False, call: Call = None
    ) -> Committed:
        self._checked(jid)
        if call is not None:
            self._checked(call[1], call[0])
        fun, tgt, tgt_type, user = load_columns(load)
        blob = pack(load)
        started = jid_time(jid) or time.time()
        wanted = sorted(set(minions)) if minions is not None else None

        def op(conn: Any) -> bool | str:
            if new and call is not None:
                cur = self._exec(conn, NEW_LOCAL_JOB, (*call, jid))
                if cur.rowcount == 0:  # a master made this call's job already: that job it is
                    row = self._exec(conn, LOCAL_JOB, call).fetchone()
                    if row is not None:  # (None: pruned meanwhile; the call gets this job)
                        return str(row[0])
            cur = self._exec(conn, NEW_JOB if new else SAVE_JOB, (jid, fun, tgt, tgt_type, user, started, blob))
            if new and cur.rowcount == 0:  # another job (another master's) holds the jid: untouched
                if call is not None:
                    self._exec(conn, "DELETE FROM local_jobs WHERE minion_id = ? AND local_jid = ?", call)
                log.warning("job cache: job %s (%s) not stored: another job holds that jid", jid, fun)
                return False
            if wanted is not None:
                self._merge_minions(conn, jid, wanted)
            return jid if new else True

        return self._submit(op)

    def _merge_minions(self, conn: Any, jid: str, minions: list[str]) -> None:
        row = self._exec(conn, "SELECT minions FROM jobs WHERE jid = ?", (jid,)).fetchone()
        if row is None:
            log.warning("job cache: minions for unknown job %s dropped", jid)
            return
        known = set(unpack(row[0]) or [])
        merged = sorted(known | set(minions))
        self._exec(conn, "UPDATE jobs SET minions = ? WHERE jid = ?", (pack(merged), jid))
        new = [(jid, m) for m in minions if m not in known]
        if new:
            conn.cursor().executemany(
                self._sql("INSERT INTO job_minions (jid, minion_id) VALUES (?, ?) ON CONFLICT DO NOTHING"), new
            )

    def save_minions(self, jid: str, minions: list[str]) -> None:
        self._checked(jid)
        wanted = sorted(set(minions))
        self._submit(lambda conn: self._merge_minions(conn, jid, wanted))

    def save_return(self, jid: str, minion_id: str, ret: Any) -> Committed:
        self._checked(jid, minion_id)
        record = return_record(ret)
        success = record.get("success")
        return self._submit(
            ReturnRow(
                jid,
                minion_id,
                time.time(),
                None if success is None else int(bool(success)),
                int_or_none(record.get("retcode")),
                pack(record),
            )
        )

    def save_event(self, tag: str, data: dict[str, Any], master_id: str) -> bool:
        if self.readonly or self._closed:
            return False
        with self._events_lock:
            full = self._events_waiting >= self.buffer_max
            if full:
                self.events_dropped += 1
            else:
                self._events_waiting += 1
        if full:
            now = time.monotonic()
            if now - self._events_logged >= OUTAGE_LOG_EVERY:
                self._events_logged = now
                log.warning(
                    "job cache: %d events wait to be written already (postgres.buffer_max): events dropped "
                    "(%d so far), the first %s",
                    self.buffer_max,
                    self.events_dropped,
                    tag,
                )
            return False
        self._queue.put((EventRow(tag, data, time.time(), master_id), None))
        return True

    def flush(self, timeout: float | None = None) -> bool:
        if self.readonly or self._closed:
            return True
        try:
            self._submit(None).result(timeout)
        except concurrent.futures.TimeoutError:
            return False
        return True

    def prune(self, keep_hours: float, timeout: float | None = 300.0) -> int:
        if not keep_hours or keep_hours <= 0:
            return 0
        cutoff = time.time() - keep_hours * 3600.0

        def op(conn: Any) -> int:
            self._exec(conn, "DELETE FROM returns WHERE jid IN (SELECT jid FROM jobs WHERE started < ?)", (cutoff,))
            self._exec(conn, "DELETE FROM job_minions WHERE jid IN (SELECT jid FROM jobs WHERE started < ?)", (cutoff,))
            self._exec(conn, "DELETE FROM local_jobs WHERE jid IN (SELECT jid FROM jobs WHERE started < ?)", (cutoff,))
            removed = int(self._exec(conn, "DELETE FROM jobs WHERE started < ?", (cutoff,)).rowcount)
            self._exec(
                conn,
                "DELETE FROM returns WHERE received < ? AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.jid = returns.jid)",
                (cutoff,),
            )
            events = int(self._exec(conn, "DELETE FROM events WHERE stamp < ?", (cutoff,)).rowcount)
            if events:
                log.info("job cache: pruned %d events older than %s hours", events, keep_hours)
            return removed

        try:
            removed = int(self._submit(op).result(timeout))
        except concurrent.futures.TimeoutError:
            log.warning("job cache: pruning did not finish within %s s (the database is away?)", timeout)
            return 0
        if removed:
            log.info("job cache: pruned %d jobs older than %s hours", removed, keep_hours)
        return removed

    def close(self, timeout: float | None = None) -> None:
        if self._closed:
            return
        if self._thread is not None:
            if not self.flush(timeout):
                log.error("job cache: closing with writes not written (the database is away)")
            self._queue.put(_STOP)
            self._thread.join(timeout)
        self._closed = True
        with self._readers_lock:
            for conn in self._readers:
                self._drop(conn)
            self._readers.clear()

    # ----- reads -----------------------------------------------------------------------------
    def _reader(self) -> Any | None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise JobCacheError("the job cache is closed")
        conn = self._read_connection()
        if conn is None:
            return None
        self._local.conn = conn
        with self._readers_lock:
            self._readers.append(conn)
        return conn

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        conn = self._reader()
        if conn is None:
            return []
        try:
            return list(self._exec(conn, sql, params).fetchall())
        except self.db_error as exc:
            if self._missing_table(exc):
                return []  # a read-only look at a cache the master has not set up yet
            if self._transient(exc):
                self._local.conn = None  # the next read reconnects
                with self._readers_lock:
                    if conn in self._readers:
                        self._readers.remove(conn)
                self._drop(conn)
                raise JobCacheError(f"the job cache database is unreachable: {exc}") from exc
            raise

    def _newest(
        self, select: str, key: str, where: list[str], params: list[Any], limit: int | None
    ) -> list[tuple[Any, ...]]:
        """The rows of ``select`` meeting every ``where`` condition, newest ``key`` first, at most ``limit``."""
        sql = select
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {key} DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params = [*params, int(limit)]
        return self._query(sql, tuple(params))

    def get_load(self, jid: str) -> dict[str, Any]:
        self._checked(jid)
        rows = self._query("SELECT load, minions FROM jobs WHERE jid = ?", (jid,))
        if not rows:
            return {}
        load = unpack(rows[0][0]) or {}
        minions = unpack(rows[0][1])
        if minions:
            load["Minions"] = sorted(minions)
        return load

    def get_returns(self, jid: str) -> dict[str, dict[str, Any]]:
        self._checked(jid)
        rows = self._query("SELECT minion_id, ret FROM returns WHERE jid = ? ORDER BY minion_id", (jid,))
        return {minion_id: unpack(blob) for minion_id, blob in rows}

    def get_minions(self, jid: str) -> list[str]:
        self._checked(jid)
        rows = self._query("SELECT minions FROM jobs WHERE jid = ?", (jid,))
        return sorted(unpack(rows[0][0]) or []) if rows else []

    def targeted(self, jid: str, minion_id: str) -> bool | None:
        self._checked(jid)
        rows = self._query(
            "SELECT EXISTS (SELECT 1 FROM job_minions WHERE jid = ? AND minion_id = ?), "
            "EXISTS (SELECT 1 FROM jobs WHERE jid = ?)",
            (jid, minion_id, jid),
        )
        if not rows or not rows[0][1]:
            return None
        return bool(rows[0][0])

    def returned_ids(self, jid: str) -> list[str]:
        self._checked(jid)
        return [r[0] for r in self._query("SELECT minion_id FROM returns WHERE jid = ? ORDER BY minion_id", (jid,))]

    def list_jobs(
        self,
        *,
        start_time: float | None = None,
        end_time: float | None = None,
        functions: list[str] | None = None,
        limit: int | None = None,
        newest_first: bool = False,
    ) -> list[JobRecord]:
        where: list[str] = []
        params: list[Any] = []
        if start_time is not None:
            where.append("started >= ?")
            params.append(start_time)
        if end_time is not None:
            where.append("started <= ?")
            params.append(end_time)
        if functions:
            globs = [self._glob("fun", f) for f in functions]
            where.append("(" + " OR ".join(cond for cond, _ in globs) + ")")
            params.extend(param for _, param in globs)
        rows = self._newest(
            'SELECT jid, fun, tgt, tgt_type, "user", started, load, minions FROM jobs', "jid", where, params, limit
        )
        records = []
        for jid, fun, tgt, tgt_type, user, started, load, minions in rows:
            data = unpack(load) or {}
            records.append(
                JobRecord(
                    jid=jid,
                    fun=fun,
                    tgt=data.get("tgt", tgt),
                    tgt_type=tgt_type,
                    user=user,
                    started=float(started),
                    load=data,
                    minions=unpack(minions),
                )
            )
        if not newest_first:
            records.reverse()
        return records

    def list_events(
        self, *, tag: str | None = None, since: float | None = None, limit: int | None = None
    ) -> list[EventRecord]:
        where: list[str] = []
        params: list[Any] = []
        if tag is not None and tag != "*":
            cond, param = self._glob("tag", tag)
            where.append(cond)
            params.append(param)
        if since is not None:
            where.append("stamp >= ?")
            params.append(float(since))
        rows = self._newest("SELECT id, tag, data, stamp, master_id FROM events", "id", where, params, limit)
        records = [
            EventRecord(
                id=int(ident),
                tag=event_tag,
                data=json.loads(data) if isinstance(data, (str, bytes)) else data,
                stamp=float(stamp),
                master_id=master_id,
            )
            for ident, event_tag, data, stamp, master_id in rows
        ]
        records.reverse()
        return records
