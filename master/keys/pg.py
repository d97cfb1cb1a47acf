"""The minion keys in PostgreSQL (``key_store: postgres``): several masters share acceptance.

Runs on the master host, under :class:`briny.master.keys.store.KeyStore` (the daemon, ``briny-key``,
the wheel and runners), with the connection keys of the PostgreSQL job cache (``postgres.dsn``,
or ``postgres.host`` / ``port`` / ``db`` / ``user`` / ``passwd``: :func:`briny.master.jobcache.pg.conninfo`).

Tables (created on first start, under an advisory lock, when missing; only then, so a role that may
only read and write them starts a master once they exist: :func:`briny.master.jobcache.pg.create_missing`):

- ``minion_keys``: one row per minion key, ``(minion_id, state)`` the key, ``state`` one of
  ``accepted`` / ``pending`` / ``rejected`` / ``denied``, ``pub`` the PEM text, ``changed`` the
  epoch seconds of the last write;
- ``key_generation``: one row, a counter every change adds one to, in the change's own
  transaction: a master reads it (one tiny query) to learn whether any master or ``briny-key``
  changed a key since its last listing, and lists the table again only then.

Only minion public keys and their states are here; each master's own key pair stays on its disk.
Every change runs in one transaction under an advisory lock (:meth:`PgKeyTable.locked`), so two
masters deciding the auth of one new minion at once do not race. On the first start against an
empty table, the keys in the master's key folders are copied in (a master moving to a shared key
store keeps its minions); from then on the folders are not read.

The database going away: reads (the auth of a known minion, listings) are served from what the
last successful reads saw, with a warning in the log (at most once a minute); changes (a new
minion's key, ``briny-key -a``) fail with :class:`KeyStoreError` until it is back (a minion
retries its auth). A reconnection is tried at most every :data:`RETRY` seconds.

Threads: any; one connection, used by one thread at a time (a lock).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from briny.common.exceptions import ConfigError, KeyStoreError
from briny.master.jobcache.pg import conninfo, connect, create_missing, driver, redacted
from briny.master.keys.fs import FolderTable
from briny.master.keys.table import FOLDER_OF, KEY_DIRS, STATUS_OF, KeyTable

log = logging.getLogger(__name__)

T = TypeVar("T")

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS minion_keys ("
    " minion_id TEXT NOT NULL, state TEXT NOT NULL, pub TEXT NOT NULL, changed DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (minion_id, state))",
    "CREATE TABLE IF NOT EXISTS key_generation ("
    " one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), generation BIGINT NOT NULL)",
    "INSERT INTO key_generation (one, generation) VALUES (TRUE, 0) ON CONFLICT DO NOTHING",
)
TABLES = ("minion_keys", "key_generation")  # what SCHEMA makes
KEYS_LOCK = 0x6B657973  # "keys": the advisory lock of every change (and of the schema's creation)
RETRY = 1.0  # seconds between reconnection attempts while the database is away
OUTAGE_LOG_EVERY = 60.0
STATEMENT_TIMEOUT_MS = 15_000  # a statement (a change waiting on another master's lock too) fails past this
TEXTS_KEPT = 100_000  # key texts remembered to serve auths while the database is away

Listing = dict[str, frozenset[str]]


class PgKeyTable(KeyTable):
    """The key table in PostgreSQL; see the module docstring."""

    def __init__(self, dsn: str, *, key: str = "postgres.dsn", disk: FolderTable | None = None) -> None:
        self.psycopg = driver()
        self.dsn = dsn
        self.where = f"postgres ({redacted(dsn)})"
        self.generation = 0
        self._seen = -1  # the database's counter at the last listing
        self._lock = threading.RLock()
        self._conn: Any = None
        self._in_change = False
        self._changed = False
        self._listing: Listing | None = None
        self._texts: dict[tuple[str, str], str] = {}
        self._retry_at = 0.0
        self._outage_logged = float("-inf")
        try:
            self._conn = self._connect()
        except self.psycopg.Error as exc:
            raise ConfigError(f"key_store: postgres: cannot connect with {key} ({redacted(dsn)}): {exc}") from None
        try:
            with self._conn.transaction():
                create_missing(self._conn, KEYS_LOCK, TABLES, SCHEMA)  # a role without CREATE starts once they exist
                if disk is not None:
                    self._import(disk)
        except self.psycopg.Error as exc:
            self.close()
            raise ConfigError(f"key_store: postgres: cannot create the tables ({redacted(dsn)}): {exc}") from None

    def _connect(self) -> Any:
        # every auth reads here (under the lock): a statement never waits longer than STATEMENT_TIMEOUT
        return connect(self.dsn, options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")

    def _import(self, disk: FolderTable) -> None:
        """Copy the key folders' keys into a table no master has written yet (in the schema's transaction)."""
        (generation,) = self._conn.execute("SELECT generation FROM key_generation").fetchone()
        if generation or self._conn.execute("SELECT EXISTS (SELECT 1 FROM minion_keys)").fetchone()[0]:
            return
        rows = []
        for folder in KEY_DIRS:
            for minion_id in sorted(disk.names(folder)):
                text = disk.text(folder, minion_id)
                if text is not None:
                    rows.append((minion_id, STATUS_OF[folder], text, time.time()))
        if rows:
            self._conn.cursor().executemany(
                "INSERT INTO minion_keys (minion_id, state, pub, changed) VALUES (%s, %s, %s, %s)", rows
            )
            self._conn.execute("UPDATE key_generation SET generation = generation + 1")
            log.warning(
                "key store: %d keys of %s copied into %s (the first start on it)", len(rows), disk.where, self.where
            )

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None:
                with contextlib.suppress(self.psycopg.Error):
                    conn.close()

    # ----- the connection, and the database going away -------------------------------------
    def _transient(self, exc: BaseException) -> bool:
        return isinstance(exc, (self.psycopg.OperationalError, self.psycopg.InterfaceError))

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed:
            if time.monotonic() < self._retry_at:
                raise KeyStoreError(f"the key store database is unreachable ({self.where})")
            try:
                self._conn = self._connect()
            except self.psycopg.Error as exc:
                self._retry_at = time.monotonic() + RETRY
                raise KeyStoreError(f"the key store database is unreachable ({self.where}): {exc}") from exc
        return self._conn

    def _lost(self, exc: BaseException) -> KeyStoreError:
        """Forget a connection that failed; the error to raise."""
        self._retry_at = time.monotonic() + RETRY
        with contextlib.suppress(self.psycopg.Error):
            if self._conn is not None:
                self._conn.close()
        self._conn = None
        return KeyStoreError(f"the key store database is unreachable ({self.where}): {exc}")

    def _read(self, query: Callable[[Any], T], fallback: Callable[[], T | None]) -> T:
        """``query(connection)``; while the database is away (and outside a change), what
        ``fallback`` makes of the last reads, with a warning."""
        with self._lock:
            try:
                try:
                    return query(self._connection())
                except self.psycopg.Error as exc:
                    if not self._transient(exc):
                        raise
                    raise self._lost(exc) from exc
            except KeyStoreError as exc:
                if self._in_change:
                    raise
                served = fallback()
                if served is None:
                    raise
                now = time.monotonic()
                if now - self._outage_logged >= OUTAGE_LOG_EVERY:
                    self._outage_logged = now
                    log.warning("%s; serving the keys as last read (no key can change until it is back)", exc)
                return served

    # ----- reads ---------------------------------------------------------------------------
    def folders(self) -> tuple[int, Listing]:
        def query(conn: Any) -> tuple[int, Listing]:
            (generation,) = conn.execute("SELECT generation FROM key_generation").fetchone()
            if self._listing is None or generation != self._seen:
                found: dict[str, set[str]] = {folder: set() for folder in KEY_DIRS}
                for minion_id, state in conn.execute("SELECT minion_id, state FROM minion_keys"):
                    if state in FOLDER_OF:
                        found[FOLDER_OF[state]].add(minion_id)
                self._listing = {folder: frozenset(ids) for folder, ids in found.items()}
                self._seen = int(generation)
                self.generation += 1  # this process's count of listings that found a change
            return self.generation, self._listing

        def last() -> tuple[int, Listing] | None:
            return (self.generation, self._listing) if self._listing is not None else None

        return self._read(query, last)

    def names(self, folder: str) -> frozenset[str]:
        return self.folders()[1][folder]

    def states_of(self, minion_id: str) -> frozenset[str]:
        def query(conn: Any) -> frozenset[str]:
            rows = conn.execute("SELECT state FROM minion_keys WHERE minion_id = %s", (minion_id,)).fetchall()
            return frozenset(FOLDER_OF[state] for (state,) in rows if state in FOLDER_OF)

        def last() -> frozenset[str] | None:
            if self._listing is None:
                return None
            return frozenset(folder for folder, ids in self._listing.items() if minion_id in ids)

        return self._read(query, last)

    def text(self, folder: str, minion_id: str) -> str | None:
        state = STATUS_OF[folder]

        def query(conn: Any) -> str | None:
            row = conn.execute(
                "SELECT pub FROM minion_keys WHERE minion_id = %s AND state = %s", (minion_id, state)
            ).fetchone()
            if row is None:
                self._texts.pop((folder, minion_id), None)
                return None
            if len(self._texts) >= TEXTS_KEPT:
                self._texts.clear()
            self._texts[(folder, minion_id)] = row[0]
            return str(row[0])

        def last() -> str | None:
            return self._texts.get((folder, minion_id))

        return self._read(query, last)

    # ----- changes -------------------------------------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        with self._lock:
            conn = self._connection()
            self._in_change, self._changed = True, False
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (KEYS_LOCK,))
                    yield
                    if self._changed:
                        conn.execute("UPDATE key_generation SET generation = generation + 1")
            except self.psycopg.Error as exc:
                if self._transient(exc):
                    raise self._lost(exc) from exc
                raise KeyStoreError(f"the key store could not make the change: {exc}") from exc
            finally:
                self._in_change = False

    def _change(self, sql: str, params: tuple[Any, ...]) -> Any:
        if not self._in_change:
            raise KeyStoreError("a key change outside KeyTable.locked()")
        cur = self._conn.execute(sql, params)
        self._changed = self._changed or cur.rowcount > 0
        return cur

    def write(self, folder: str, minion_id: str, text: str) -> None:
        self._change(
            "INSERT INTO minion_keys (minion_id, state, pub, changed) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (minion_id, state) DO UPDATE SET pub = excluded.pub, changed = excluded.changed",
            (minion_id, STATUS_OF[folder], text, time.time()),
        )

    def move(self, src: str, dst: str, minion_id: str) -> bool:
        row = self._change(
            "DELETE FROM minion_keys WHERE minion_id = %s AND state = %s RETURNING pub", (minion_id, STATUS_OF[src])
        ).fetchone()
        if row is None:
            return False
        self.write(dst, minion_id, row[0])
        return True

    def remove(self, folder: str, minion_id: str) -> bool:
        cur = self._change(
            "DELETE FROM minion_keys WHERE minion_id = %s AND state = %s", (minion_id, STATUS_OF[folder])
        )
        return bool(cur.rowcount)


def open_pg_table(opts: dict[str, Any], disk: FolderTable) -> PgKeyTable:
    """The key table of a master config with ``key_store: postgres``."""
    dsn, key = conninfo(opts)
    return PgKeyTable(dsn, key=key, disk=disk)
