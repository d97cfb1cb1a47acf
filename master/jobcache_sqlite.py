"""The SQLite job cache backend (the default), with one writer thread.

Runs on the master host: in the master daemon (the writer) and in
``briny-run`` / the client API (readers, ``readonly=True``, other processes).

The database is one file (``cachedir/jobs.sqlite``, mode 0600) in WAL mode,
so readers read while the writer writes. Tables: ``jobs`` (one row per job:
jid, fun, tgt, tgt_type, user, started, the load and the targeted minions
as msgpack blobs), ``returns`` (one row per jid and minion: received,
success, retcode and the return record as a msgpack blob) and
``job_minions`` (one row per jid and targeted minion, written with the
blob: the index :meth:`SqliteJobCache.targeted` reads for every return the
master no longer remembers; a cache made before it existed is filled from
the blobs when opened). All SQL of the job cache is in this module.

Writes go through a queue to a single thread that owns the only writing
connection; it applies what is queued in one transaction per batch.
Readers use one connection per thread.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import queue
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import msgpack

from briny.common.exceptions import JobCacheError
from briny.master.jobcache import JobCache, JobRecord, jid_time, load_columns, return_record

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    jid      TEXT PRIMARY KEY,
    fun      TEXT NOT NULL,
    tgt      TEXT NOT NULL,
    tgt_type TEXT NOT NULL,
    user     TEXT NOT NULL,
    started  REAL NOT NULL,
    load     BLOB NOT NULL,
    minions  BLOB
);
CREATE INDEX IF NOT EXISTS jobs_started ON jobs (started);
CREATE INDEX IF NOT EXISTS jobs_fun ON jobs (fun);
CREATE TABLE IF NOT EXISTS returns (
    jid       TEXT NOT NULL,
    minion_id TEXT NOT NULL,
    received  REAL NOT NULL,
    success   INTEGER,
    retcode   INTEGER,
    ret       BLOB NOT NULL,
    PRIMARY KEY (jid, minion_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS returns_received ON returns (received);
CREATE TABLE IF NOT EXISTS job_minions (
    jid       TEXT NOT NULL,
    minion_id TEXT NOT NULL,
    PRIMARY KEY (jid, minion_id)
) WITHOUT ROWID;
"""
BATCH_MAX = 500
_STOP = object()

Op = Callable[[sqlite3.Connection], Any]


def _plain(value: Any) -> Any:
    """``value`` with what msgpack cannot carry turned into strings."""
    if isinstance(value, dict):
        return {
            (k if isinstance(k, (str, int, float, bool, bytes)) or k is None else str(k)): _plain(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool, bytes)):
        return value
    return str(value)


def pack(value: Any) -> bytes:
    try:
        return msgpack.packb(value, use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        return msgpack.packb(_plain(value), use_bin_type=True)


def unpack(blob: bytes | None) -> Any:
    if blob is None:
        return None
    return msgpack.unpackb(blob, raw=False, strict_map_key=False)


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    return None


class SqliteJobCache(JobCache):
    """The job cache in one SQLite file; see the module docstring."""

    def __init__(self, path: str, *, readonly: bool = False, busy_timeout: float = 10.0) -> None:
        self.path = os.path.abspath(path)
        self.readonly = readonly
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._queue: queue.Queue[Any] = queue.Queue()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        if not readonly:
            self._create()
            self._thread = threading.Thread(target=self._writer, name="briny-jobcache-writer", daemon=True)
            self._thread.start()

    # ----- setup -----------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        return conn

    def _create(self) -> None:
        folder = os.path.dirname(self.path)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        conn = self._connect()
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            had_index = (
                conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'job_minions'").fetchone()
                is not None
            )
            conn.executescript(SCHEMA)
            if not had_index:
                self._fill_index(conn)
        finally:
            conn.close()

    @staticmethod
    def _fill_index(conn: sqlite3.Connection) -> None:
        """``job_minions`` from the ``minions`` blobs (a cache written before the index)."""
        rows = [
            (jid, minion_id)
            for jid, blob in conn.execute("SELECT jid, minions FROM jobs WHERE minions IS NOT NULL")
            for minion_id in (unpack(blob) or [])
            if isinstance(minion_id, str)
        ]
        if rows:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT OR IGNORE INTO job_minions (jid, minion_id) VALUES (?, ?)", rows)
            conn.execute("COMMIT")
            log.info("job cache: indexed the targets of existing jobs (%d rows)", len(rows))

    # ----- the writer ------------------------------------------------------------------------
    def _writer(self) -> None:
        conn = self._connect()
        conn.execute("PRAGMA synchronous = NORMAL")
        try:
            while True:
                item = self._queue.get()
                batch = [item]
                while len(batch) < BATCH_MAX:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                stop = self._apply(conn, batch)
                if stop:
                    return
        finally:
            conn.close()

    def _apply(self, conn: sqlite3.Connection, batch: list[Any]) -> bool:
        """Run a batch in one transaction; resolve the futures after the commit."""
        stop = False
        done: list[tuple[concurrent.futures.Future[Any], Any, BaseException | None]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            log.error("job cache: cannot start a write transaction: %s", exc)
        for item in batch:
            if item is _STOP:
                stop = True
                continue
            op, fut = item
            try:
                result = op(conn) if op is not None else None
            except (sqlite3.Error, ValueError, TypeError) as exc:
                log.error("job cache write failed: %s", exc)
                done.append((fut, None, exc))
            else:
                done.append((fut, result, None))
        try:
            if conn.in_transaction:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            log.error("job cache: commit failed, %d writes lost: %s", len(batch), exc)
            for fut, _, _ in done:
                if fut is not None and not fut.done():
                    fut.set_exception(exc)
            return stop
        for fut, result, error in done:
            if fut is None:
                continue
            if error is not None:
                fut.set_exception(error)
            else:
                fut.set_result(result)
        return stop

    def _submit(self, op: Op | None) -> concurrent.futures.Future[Any]:
        if self.readonly:
            raise JobCacheError("this job cache was opened read-only")
        if self._closed:
            raise JobCacheError("the job cache is closed")
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((op, fut))
        return fut

    # ----- writes ----------------------------------------------------------------------------
    def save_load(self, jid: str, load: dict[str, Any], minions: list[str] | None = None) -> None:
        self._checked(jid)
        fun, tgt, tgt_type, user = load_columns(load)
        blob = pack(load)
        started = jid_time(jid) or time.time()
        wanted = sorted(set(minions)) if minions is not None else None

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO jobs (jid, fun, tgt, tgt_type, user, started, load, minions) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, NULL) ON CONFLICT (jid) DO UPDATE SET "
                "fun = excluded.fun, tgt = excluded.tgt, tgt_type = excluded.tgt_type, "
                "user = excluded.user, load = excluded.load",
                (jid, fun, tgt, tgt_type, user, started, blob),
            )
            if wanted is not None:
                self._merge_minions(conn, jid, wanted)

        self._submit(op)

    @staticmethod
    def _merge_minions(conn: sqlite3.Connection, jid: str, minions: list[str]) -> None:
        row = conn.execute("SELECT minions FROM jobs WHERE jid = ?", (jid,)).fetchone()
        if row is None:
            log.warning("job cache: minions for unknown job %s dropped", jid)
            return
        known = set(unpack(row[0]) or [])
        merged = sorted(known | set(minions))
        conn.execute("UPDATE jobs SET minions = ? WHERE jid = ?", (pack(merged), jid))
        conn.executemany(
            "INSERT OR IGNORE INTO job_minions (jid, minion_id) VALUES (?, ?)",
            [(jid, m) for m in minions if m not in known],
        )

    def save_minions(self, jid: str, minions: list[str]) -> None:
        self._checked(jid)
        wanted = sorted(set(minions))
        self._submit(lambda conn: self._merge_minions(conn, jid, wanted))

    def save_return(self, jid: str, minion_id: str, ret: Any) -> None:
        self._checked(jid, minion_id)
        record = return_record(ret)
        blob = pack(record)
        success = record.get("success")
        success_col = None if success is None else int(bool(success))
        retcode = _int_or_none(record.get("retcode"))
        received = time.time()

        def op(conn: sqlite3.Connection) -> None:
            cur = conn.execute(
                "INSERT OR IGNORE INTO returns (jid, minion_id, received, success, retcode, ret) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (jid, minion_id, received, success_col, retcode, blob),
            )
            if cur.rowcount == 0:
                log.warning(
                    "job cache: a second return of %s for job %s was dropped (the first one is kept)", minion_id, jid
                )

        self._submit(op)

    def flush(self, timeout: float | None = None) -> bool:
        if self.readonly or self._closed:
            return True
        try:
            self._submit(None).result(timeout)
        except concurrent.futures.TimeoutError:
            return False
        return True

    def prune(self, keep_hours: float) -> int:
        if not keep_hours or keep_hours <= 0:
            return 0
        cutoff = time.time() - keep_hours * 3600.0

        def op(conn: sqlite3.Connection) -> int:
            conn.execute("DELETE FROM returns WHERE jid IN (SELECT jid FROM jobs WHERE started < ?)", (cutoff,))
            conn.execute("DELETE FROM job_minions WHERE jid IN (SELECT jid FROM jobs WHERE started < ?)", (cutoff,))
            removed = conn.execute("DELETE FROM jobs WHERE started < ?", (cutoff,)).rowcount
            conn.execute("DELETE FROM returns WHERE received < ? AND jid NOT IN (SELECT jid FROM jobs)", (cutoff,))
            return removed

        removed = int(self._submit(op).result())
        if removed:
            log.info("job cache: pruned %d jobs older than %s hours", removed, keep_hours)
        return removed

    def close(self) -> None:
        if self._closed:
            return
        if self._thread is not None:
            self.flush()
            self._queue.put(_STOP)
            self._thread.join()
        self._closed = True
        with self._readers_lock:
            for conn in self._readers:
                try:
                    conn.close()
                except sqlite3.Error:  # another thread's connection in use
                    pass
            self._readers.clear()

    # ----- reads -----------------------------------------------------------------------------
    def _reader(self) -> sqlite3.Connection | None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise JobCacheError("the job cache is closed")
        if self.readonly and not os.path.exists(self.path):
            return None
        if self.readonly:
            conn = sqlite3.connect(
                f"file:{urllib.parse.quote(self.path)}?mode=ro",
                uri=True,
                timeout=self.busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
        else:
            conn = self._connect()
        conn.execute("PRAGMA query_only = ON")
        self._local.conn = conn
        with self._readers_lock:
            self._readers.append(conn)
        return conn

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        conn = self._reader()
        if conn is None:
            return []
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []  # a read-only look at a cache the master has not set up yet
            raise

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
            where.append("(" + " OR ".join("fun GLOB ?" for _ in functions) + ")")
            params.extend(functions)
        sql = "SELECT jid, fun, tgt, tgt_type, user, started, load, minions FROM jobs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY jid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        records = []
        for jid, fun, tgt, tgt_type, user, started, load, minions in self._query(sql, tuple(params)):
            data = unpack(load) or {}
            records.append(
                JobRecord(
                    jid=jid,
                    fun=fun,
                    tgt=data.get("tgt", tgt),
                    tgt_type=tgt_type,
                    user=user,
                    started=started,
                    load=data,
                    minions=unpack(minions),
                )
            )
        if not newest_first:
            records.reverse()
        return records
