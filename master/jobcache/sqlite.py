"""The SQLite job cache backend (the default).

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
the blobs when opened), ``local_jobs`` (one row per minion's own call, its id and its jid:
the master's job of it, so a return sent twice, to one master or two, is one job) and
``events`` (the master's bus, ``event_return: job_cache``:
id, tag, data as JSON text, stamp, master_id; indexed by stamp and tag).

The writes, the reads and the SQL the backends share are in
:mod:`briny.master.jobcache.sql` (the writer thread in :mod:`briny.master.jobcache.writer`); here
are the file, the schema and SQLite's dialect.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import urllib.parse
from typing import Any

from briny.master.jobcache.sql import SqlJobCache
from briny.master.jobcache.rows import ReturnRow, unpack

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    jid      TEXT PRIMARY KEY,
    fun      TEXT NOT NULL,
    tgt      TEXT NOT NULL,
    tgt_type TEXT NOT NULL,
    "user"   TEXT NOT NULL,
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
CREATE TABLE IF NOT EXISTS local_jobs (
    minion_id TEXT NOT NULL,
    local_jid TEXT NOT NULL,
    jid       TEXT NOT NULL,
    PRIMARY KEY (minion_id, local_jid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS local_jobs_jid ON local_jobs (jid);
CREATE TABLE IF NOT EXISTS events (
    id        INTEGER PRIMARY KEY,
    tag       TEXT NOT NULL,
    data      TEXT NOT NULL,
    stamp     REAL NOT NULL,
    master_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_stamp ON events (stamp);
CREATE INDEX IF NOT EXISTS events_tag ON events (tag);
"""


class SqliteJobCache(SqlJobCache):
    """The job cache in one SQLite file; see the module docstring."""

    db_error = sqlite3.Error

    def __init__(self, path: str, *, readonly: bool = False, busy_timeout: float = 10.0) -> None:
        super().__init__(readonly=readonly)
        self.path = os.path.abspath(path)
        self.busy_timeout = busy_timeout
        if not readonly:
            self._create()
            self._start_writer()

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

    # ----- the backend's part of the writer and the reads ----------------------------------------
    def _write_connection(self) -> sqlite3.Connection:
        conn = self._connect()
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def _read_connection(self) -> sqlite3.Connection | None:
        if not self.readonly:
            conn = self._connect()
        elif not os.path.exists(self.path):
            return None
        else:
            conn = sqlite3.connect(
                f"file:{urllib.parse.quote(self.path)}?mode=ro",
                uri=True,
                timeout=self.busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
        conn.execute("PRAGMA query_only = ON")
        return conn

    def _begin(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")

    def _commit(self, conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            conn.execute("COMMIT")

    def _rollback(self, conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            conn.execute("ROLLBACK")

    def _insert_returns(self, conn: sqlite3.Connection, rows: list[ReturnRow]) -> set[tuple[str, str]]:
        inserted = set()
        for row in rows:  # a local file: one statement per row costs no round trip
            cur = conn.execute(
                "INSERT OR IGNORE INTO returns (jid, minion_id, received, success, retcode, ret) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (row.jid, row.minion_id, row.received, row.success, row.retcode, row.ret),
            )
            if cur.rowcount:
                inserted.add((row.jid, row.minion_id))
        return inserted

    def _insert_events(self, conn: sqlite3.Connection, rows: list[tuple[str, str, float, str]]) -> None:
        conn.executemany("INSERT INTO events (tag, data, stamp, master_id) VALUES (?, ?, ?, ?)", rows)

    def _glob(self, column: str, pattern: str) -> tuple[str, Any]:
        return f"{column} GLOB ?", pattern

    def _missing_table(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and "no such table" in str(exc)
