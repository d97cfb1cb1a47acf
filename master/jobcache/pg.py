"""The PostgreSQL job cache backend (``job_cache: postgres``), for several masters or a large fleet.

Runs on the master host: in the master daemon (the writer) and in ``briny-run`` / the
client API (readers). Needs psycopg 3 (``pip install briny[postgres]``).

Where: ``postgres.dsn`` (a libpq connection string or URI), else ``postgres.host``
(localhost), ``postgres.port`` (5432), ``postgres.db`` (salt), ``postgres.user`` (salt)
and ``postgres.passwd`` (Salt's returner key; ``postgres.password`` is read too).
The tables are the SQLite backend's (``jobs``, ``returns``, ``job_minions``, ``local_jobs``,
``events``: there ``data`` is ``jsonb``, queried as Salt's pgjsonb ``salt_events``), created on
first start when missing (under an advisory lock, so masters starting together do
not race); see docs/scaling.md. A database that cannot be reached at start is a
:class:`ConfigError` naming the key; one that goes away later is waited for
(:mod:`briny.master.jobcache.writer`: the writes are buffered within
``postgres.buffer_max`` and written when it is back).

The writes, the reads and their SQL are shared (:mod:`briny.master.jobcache.sql`); here
are the connections, the schema and PostgreSQL's dialect: ``%s`` parameters, a
savepoint around each job write, the returns (and the events) of a batch in one ``unnest`` statement,
globs as anchored regular expressions.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Sequence
from typing import Any

from briny.common.exceptions import ConfigError
from briny.master.jobcache.sql import SqlJobCache
from briny.master.jobcache.writer import BUFFER_MAX
from briny.master.jobcache.rows import ReturnRow

log = logging.getLogger(__name__)

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS jobs ("
    " jid TEXT PRIMARY KEY, fun TEXT NOT NULL, tgt TEXT NOT NULL, tgt_type TEXT NOT NULL,"
    ' "user" TEXT NOT NULL, started DOUBLE PRECISION NOT NULL, load BYTEA NOT NULL, minions BYTEA)',
    "CREATE INDEX IF NOT EXISTS jobs_started ON jobs (started)",
    "CREATE INDEX IF NOT EXISTS jobs_fun ON jobs (fun)",
    "CREATE TABLE IF NOT EXISTS returns ("
    " jid TEXT NOT NULL, minion_id TEXT NOT NULL, received DOUBLE PRECISION NOT NULL,"
    " success SMALLINT, retcode BIGINT, ret BYTEA NOT NULL, PRIMARY KEY (jid, minion_id))",
    "CREATE INDEX IF NOT EXISTS returns_received ON returns (received)",
    "CREATE TABLE IF NOT EXISTS job_minions (jid TEXT NOT NULL, minion_id TEXT NOT NULL, PRIMARY KEY (jid, minion_id))",
    "CREATE TABLE IF NOT EXISTS local_jobs ("
    " minion_id TEXT NOT NULL, local_jid TEXT NOT NULL, jid TEXT NOT NULL, PRIMARY KEY (minion_id, local_jid))",
    "CREATE INDEX IF NOT EXISTS local_jobs_jid ON local_jobs (jid)",
    "CREATE TABLE IF NOT EXISTS events ("
    " id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, tag TEXT NOT NULL, data JSONB NOT NULL,"
    " stamp DOUBLE PRECISION NOT NULL, master_id TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS events_stamp ON events (stamp)",
    "CREATE INDEX IF NOT EXISTS events_tag ON events (tag)",
)
TABLES = ("jobs", "returns", "job_minions", "local_jobs", "events")  # what SCHEMA makes (with their indexes)
SCHEMA_LOCK = 0x6272696E79  # "briny": the advisory lock masters take to create the schema
INSERT_RETURNS = (
    "INSERT INTO returns (jid, minion_id, received, success, retcode, ret) "
    "SELECT * FROM unnest(%s::text[], %s::text[], %s::float8[], %s::smallint[], %s::bigint[], %s::bytea[]) "
    "ON CONFLICT DO NOTHING RETURNING jid, minion_id"
)
INSERT_EVENTS = (
    "INSERT INTO events (tag, data, stamp, master_id) "
    "SELECT t, d::jsonb, s, m FROM unnest(%s::text[], %s::text[], %s::float8[], %s::text[]) "
    "WITH ORDINALITY AS u(t, d, s, m, n) ORDER BY n"
)
NUL_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")  # a JSON \u0000 (not an escaped backslash's)
CONNECT_TIMEOUT = 5
CONFLICTS = {"40P01": "a deadlock", "40001": "a serialization failure"}  # SQLSTATE: another transaction won
KEYS = ("postgres.dsn", "postgres.host", "postgres.port", "postgres.db", "postgres.user", "postgres.passwd")


def driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigError(
            "job_cache: postgres and key_store: postgres need psycopg 3, which is not installed "
            "(pip install 'briny[postgres]')"
        ) from None
    return psycopg


def conninfo(opts: dict[str, Any]) -> tuple[str, str]:
    """(the libpq connection string, the key it came from) of a master config."""
    psycopg = driver()
    dsn = opts.get("postgres.dsn")
    if dsn:
        if not isinstance(dsn, str):
            raise ConfigError(f"postgres.dsn must be a connection string, not {type(dsn).__name__}")
        try:
            psycopg.conninfo.conninfo_to_dict(dsn)
        except psycopg.ProgrammingError as exc:
            raise ConfigError(f"postgres.dsn is not a valid connection string: {exc}") from None
        return dsn, "postgres.dsn"
    password = opts.get("postgres.passwd")
    if password is None:
        password = opts.get("postgres.password")
    parts: dict[str, Any] = {
        "host": opts.get("postgres.host") or "localhost",
        "port": opts.get("postgres.port") or 5432,
        "dbname": opts.get("postgres.db") or "salt",
        "user": opts.get("postgres.user") or "salt",
    }
    if password is not None:
        parts["password"] = str(password)
    try:
        port = int(parts["port"])
    except (TypeError, ValueError):
        raise ConfigError(f"postgres.port must be a port number, not {parts['port']!r}") from None
    if not 0 < port < 65536:
        raise ConfigError(f"postgres.port must be a port number, not {port}")
    parts["port"] = port
    return psycopg.conninfo.make_conninfo(**parts), "postgres.host/port/db/user/passwd"


# A database that stops answering (packets dropped, not refused) must fail a statement within
# seconds, not after the kernel's retransmission timeout (~15 min): TCP keepalives and a user timeout.
LIVENESS = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}
TCP_USER_TIMEOUT_MS = 10_000


def connect(dsn: str, **options: Any) -> Any:
    """A psycopg connection (autocommit) to ``dsn`` for the job cache or the key store: bounded
    connect, dead peers noticed within seconds; ``options`` go to libpq (``options="-c ..."``)."""
    return driver().connect(
        dsn,
        autocommit=True,
        connect_timeout=CONNECT_TIMEOUT,
        tcp_user_timeout=TCP_USER_TIMEOUT_MS,
        **LIVENESS,
        **options,
    )


def create_missing(conn: Any, lock: int, tables: Sequence[str], schema: Sequence[str]) -> list[str]:
    """In the caller's transaction on ``conn``: take the advisory lock ``lock`` (masters starting
    together wait for each other), then run ``schema``'s ``CREATE ... IF NOT EXISTS`` statements
    only when one of ``tables`` is missing from the connection's schema; the tables that were missing.

    Only then: PostgreSQL asks for ``CREATE`` on the schema (and owning the table, for an index)
    even when there is nothing to make, so a role that may only read and write the tables starts
    on a database a role with ``CREATE`` set up."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY(%s)",
        (list(tables),),
    ).fetchall()
    have = {row[0] for row in rows}
    missing = [name for name in tables if name not in have]
    if missing:
        for statement in schema:
            conn.execute(statement)
    return missing


def redacted(dsn: str) -> str:
    """The connection string without its password, for messages."""
    psycopg = driver()
    parts = psycopg.conninfo.conninfo_to_dict(dsn)
    parts.pop("password", None)
    return " ".join(f"{k}={v}" for k, v in sorted(parts.items()))


def glob_regex(pattern: str) -> str:
    """A shell glob (``*``, ``?``, ``[...]``, ``[!...]``) as an anchored PostgreSQL regular expression."""
    out = ["^"]
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    out.append("$")
    return "".join(out)


def no_nul(text: str) -> str:
    """``text`` as PostgreSQL's text takes it (no NUL character: U+FFFD instead)."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def jsonb_text(data: str) -> str:
    """JSON text as ``jsonb`` takes it: a NUL character (``\\u0000``, which jsonb refuses) becomes U+FFFD."""
    return NUL_ESCAPE.sub(r"\1\\ufffd", data) if "\\u0000" in data else data


class PgJobCache(SqlJobCache):
    """The job cache in a PostgreSQL database; see the module docstring."""

    def __init__(self, dsn: str, *, key: str = "postgres.dsn", readonly: bool = False, buffer_max: int = BUFFER_MAX):
        super().__init__(readonly=readonly, buffer_max=buffer_max)
        self.psycopg = driver()
        self.db_error = self.psycopg.Error
        self.dsn = dsn
        try:
            conn = self._connect()
        except self.psycopg.Error as exc:
            raise ConfigError(f"job_cache: postgres: cannot connect with {key} ({redacted(dsn)}): {exc}") from None
        try:
            if not readonly:
                with conn.transaction():
                    create_missing(conn, SCHEMA_LOCK, TABLES, SCHEMA)
        except self.psycopg.Error as exc:
            raise ConfigError(f"job_cache: postgres: cannot create the tables ({redacted(dsn)}): {exc}") from None
        finally:
            conn.close()
        if not readonly:
            self._start_writer()

    def _connect(self) -> Any:
        return connect(self.dsn)

    # ----- the backend's part of the writer and the reads ----------------------------------------
    def _write_connection(self) -> Any:
        return self._connect()

    def _read_connection(self) -> Any:
        try:
            return self._connect()
        except self.psycopg.OperationalError as exc:
            from briny.common.exceptions import JobCacheError

            raise JobCacheError(f"the job cache database is unreachable: {exc}") from exc

    def _begin(self, conn: Any) -> None:
        conn.execute("BEGIN")

    def _commit(self, conn: Any) -> None:
        conn.execute("COMMIT")

    def _rollback(self, conn: Any) -> None:
        with contextlib.suppress(self.psycopg.Error):
            conn.execute("ROLLBACK")

    @contextlib.contextmanager
    def _savepoint(self, conn: Any) -> Iterator[None]:
        conn.execute("SAVEPOINT job_write")
        try:
            yield
        except self.psycopg.Error as exc:
            if not self._transient(exc):
                conn.execute("ROLLBACK TO SAVEPOINT job_write")
            raise
        conn.execute("RELEASE SAVEPOINT job_write")

    def _insert_returns(self, conn: Any, rows: list[ReturnRow]) -> set[tuple[str, str]]:
        cur = conn.execute(
            INSERT_RETURNS,
            (
                [r.jid for r in rows],
                [r.minion_id for r in rows],
                [r.received for r in rows],
                [r.success for r in rows],
                [r.retcode for r in rows],
                [r.ret for r in rows],
            ),
        )
        return {(jid, minion_id) for jid, minion_id in cur.fetchall()}

    def _insert_events(self, conn: Any, rows: list[tuple[str, str, float, str]]) -> None:
        conn.execute(
            INSERT_EVENTS,
            (
                [no_nul(tag) for tag, _, _, _ in rows],
                [jsonb_text(data) for _, data, _, _ in rows],
                [stamp for _, _, stamp, _ in rows],
                [no_nul(master_id) for _, _, _, master_id in rows],
            ),
        )

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _glob(self, column: str, pattern: str) -> tuple[str, Any]:
        return f"{column} ~ ?", glob_regex(pattern)

    def _transient(self, exc: BaseException) -> bool:
        # psycopg's OperationalError holds the lost connection and class 40 (a conflict: _conflict)
        return isinstance(exc, (self.psycopg.OperationalError, self.psycopg.InterfaceError))

    def _conflict(self, exc: BaseException) -> str | None:
        return CONFLICTS.get(getattr(exc, "sqlstate", None) or "") if isinstance(exc, self.psycopg.Error) else None

    def _missing_table(self, exc: BaseException) -> bool:
        return isinstance(exc, self.psycopg.errors.UndefinedTable)


def open_pg(opts: dict[str, Any], *, readonly: bool = False) -> PgJobCache:
    """The PostgreSQL job cache a master config names (``job_cache: postgres``)."""
    dsn, key = conninfo(opts)
    buffer_max = opts.get("postgres.buffer_max", BUFFER_MAX)
    if not isinstance(buffer_max, int) or isinstance(buffer_max, bool) or buffer_max < 1:
        raise ConfigError(f"postgres.buffer_max must be a positive number of writes, not {buffer_max!r}")
    return PgJobCache(dsn, key=key, readonly=readonly, buffer_max=buffer_max)
