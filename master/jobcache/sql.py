"""What the SQL job cache backends share: the writes and every read (the batching writer thread
is :mod:`briny.master.jobcache.writer`, the rows and their encoding :mod:`briny.master.jobcache.rows`).

Runs on the master host, under :mod:`briny.master.jobcache.sqlite` (the default) and
:mod:`briny.master.jobcache.pg` (``job_cache: postgres``). Both keep the same tables
(``jobs``, ``returns``, ``job_minions``, ``local_jobs``, ``events``: see the backends' ``SCHEMA``)
with the loads, targets and return records as msgpack blobs and the events as JSON, so the
reads, the prune and the merge of targeted minions are written once, here, in the SQL both
engines speak (``?`` marks a parameter; a backend whose driver wants another style rewrites it
in :meth:`_sql`). A job row under a jid just minted is only ever inserted, never written over
another's (``new``, :meth:`SqlJobCache.save_load`), and a minion's own call is one job
(``local_jobs``).

Writes go through a queue to one writer thread that owns the only writing connection
(:class:`~briny.master.jobcache.writer.SqlWriter`: batches, one transaction each, the writes
held while the database is away, the events' budget); reads use a connection per thread.
"""

from __future__ import annotations

import abc
import concurrent.futures
import json
import logging
import threading
import time
from typing import Any

from briny.common.exceptions import JobCacheError
from briny.master.jobcache.base import (
    Call,
    Committed,
    EventRecord,
    JobCache,
    JobRecord,
    jid_time,
    load_columns,
    return_record,
)
from briny.master.jobcache.writer import BUFFER_MAX, Op, SqlWriter
from briny.master.jobcache.rows import ReturnRow, int_or_none, pack, unpack

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


class SqlJobCache(SqlWriter, JobCache):
    """The job cache over a SQL database; a backend supplies the connections and the dialect
    (the writer's part: :class:`~briny.master.jobcache.writer.SqlWriter`)."""

    def __init__(self, *, readonly: bool = False, buffer_max: int = BUFFER_MAX) -> None:
        super().__init__(buffer_max=buffer_max)
        self.readonly = readonly
        self._local = threading.local()
        self._closed = False
        self._readers: list[Any] = []
        self._readers_lock = threading.Lock()

    # ----- what a backend supplies -----------------------------------------------------------
    @abc.abstractmethod
    def _read_connection(self) -> Any | None:
        """A new connection for reads in this thread; None when there is nothing to read yet."""

    @abc.abstractmethod
    def _glob(self, column: str, pattern: str) -> tuple[str, Any]:
        """A condition matching ``column`` against a shell glob, and its parameter."""

    def _sql(self, sql: str) -> str:
        """``sql`` in the driver's parameter style (written with ``?``)."""
        return sql

    def _missing_table(self, exc: BaseException) -> bool:
        """Whether ``exc`` says a table does not exist (a read-only look before the master made it)."""
        return False

    def _exec(self, conn: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return conn.execute(self._sql(sql), params)

    def _submit(self, op: Op | ReturnRow | None) -> concurrent.futures.Future[Any]:
        if self.readonly:
            raise JobCacheError("this job cache was opened read-only")
        if self._closed:
            raise JobCacheError("the job cache is closed")
        return self._enqueue(op)

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
        return self._enqueue_event(tag, data, master_id)

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
            self._stop_writer(timeout)
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
