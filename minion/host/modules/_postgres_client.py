"""The ``postgres`` execution module's client (a private sibling of ``postgres.py``, which
imports it, as ``_postgres_objects.py`` does): connection settings, running ``psql`` and reading
its rows. ``psql_query`` is a public function of the module."""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import tempfile
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from briny.minion.host.pgsql import Conn

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)


_CONNECT_TIMEOUT = "10"


def _option(key: str) -> Any:
    return __salt__["config.option"](key)


def _find_pg_binary(util: str) -> str | None:
    bins = _option("postgres.bins_dir")
    if bins:
        found = shutil.which(os.path.join(str(bins), util))
        if found:
            return found
    return shutil.which(util)


def _conn(
    user: Any = None,
    host: Any = None,
    port: Any = None,
    maintenance_db: Any = None,
    password: Any = None,
    runas: Any = None,
    **others: Any,
) -> Conn:
    """The connection of a call: its arguments, else the ``postgres.*`` config keys."""
    ignored = sorted(k for k in others if not str(k).startswith("__"))
    if ignored:
        log.warning("postgres: these arguments are not connection arguments and were ignored: %s", ", ".join(ignored))
    host = host or _option("postgres.host") or None
    if runas is None and (not host or str(host).startswith("/")):
        runas = "postgres"
    if password is None:
        password = _option("postgres.pass")
    return Conn(
        user=str(user or _option("postgres.user") or runas or "") or None,
        host=str(host) if host else None,
        port=str(port or _option("postgres.port") or "") or None,
        db=str(maintenance_db or _option("postgres.maintenance_db") or "postgres"),
        password=None if password in (None, "") else str(password),
        runas=str(runas) if runas else None,
    )


def _private_file(text: str, owner: str | None) -> str:
    """A temporary file (mode 0600) holding ``text``, owned by ``owner`` when running as root."""
    fd, path = tempfile.mkstemp(prefix="briny-pg-")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    if owner and os.geteuid() == 0:
        try:
            pw = pwd.getpwnam(owner)
            os.chown(path, pw.pw_uid, pw.pw_gid)
        except KeyError:
            pass  # cmd.run_all refuses the unknown user with a clear error
    return path


def _passfile(conn: Conn) -> str:
    """A private PGPASSFILE readable by the user psql runs as."""
    secret = str(conn.password).replace("\\", "\\\\").replace(":", "\\:")
    return _private_file(f"*:*:*:*:{secret}\n", conn.runas)


def _psql(conn: Conn, sql: str, db: str | None = None, transaction: bool = False) -> dict[str, Any]:
    """Run ``sql`` (one or more statements) through psql; cmd.run_all's result."""
    psql = _find_pg_binary("psql")
    if not psql:
        raise CommandExecutionError("psql was not found")
    argv = [psql, "--no-align", "--no-readline", "--no-psqlrc", "--no-password", "--quiet"]
    if conn.user:
        argv += ["--username", conn.user]
    if conn.host:
        argv += ["--host", conn.host]
    if conn.port:
        argv += ["--port", conn.port]
    argv += ["--dbname", db or conn.db, "--set", "ON_ERROR_STOP=1", "--file", "-"]
    if transaction:
        argv.append("--single-transaction")
    env = {"PGCONNECT_TIMEOUT": _CONNECT_TIMEOUT}
    passfile = _passfile(conn) if conn.password is not None else None
    if passfile:
        env["PGPASSFILE"] = passfile
    timeout = _option("postgres.timeout") or None
    try:
        ret = __salt__["cmd.run_all"](
            argv,
            python_shell=False,
            stdin=sql + "\n",
            runas=conn.runas,
            clean_env=True,
            reset_system_locale=False,
            env=env,
            timeout=timeout,
            ignore_retcode=True,
            output_loglevel="quiet",
        )
    finally:
        if passfile:
            try:
                os.remove(passfile)
            except OSError:
                log.warning("Removing the PGPASSFILE %s failed", passfile)
    if ret.get("retcode"):
        where = f"{conn.host or 'the local socket'}:{conn.port or 'default port'}, database {db or conn.db}"
        log.error("psql failed on %s: %s", where, (ret.get("stderr") or ret.get("stdout") or "").strip())
    return ret


def _run(conn: Conn, sql: str, db: str | None = None, transaction: bool = False) -> bool:
    return _psql(conn, sql, db, transaction)["retcode"] == 0


def _rows(conn: Conn, query: str, db: str | None = None) -> list[dict[str, Any]] | None:
    """The rows of a SELECT as dicts (NULL as None); None when psql failed."""
    import csv
    import io

    copy = f"COPY ({query.strip().rstrip(';')}) TO STDOUT WITH (FORMAT csv, HEADER, NULL '\\N')"
    ret = _psql(conn, copy, db)
    if ret["retcode"] != 0:
        return None
    rows = list(csv.reader(io.StringIO(ret["stdout"])))
    if not rows:
        return []
    header = rows[0]
    return [{k: (None if v == "\\N" else v) for k, v in zip(header, row)} for row in rows[1:] if row]


def _text(rows: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Rows as Salt's psql_query returns them: every value a string, NULL as ''."""
    return [{k: "" if v is None else v for k, v in row.items()} for row in rows or []]


def _bool(value: Any) -> bool | None:
    return {"t": True, "f": False}.get(value)


def psql_query(
    query: str,
    write: bool = False,
    **conn: Any,
) -> list[dict[str, str]]:
    """Run a SELECT (or a statement with RETURNING, in a read-write transaction with ``write``)."""
    c = _conn(**conn)
    if not write:
        return _text(_rows(c, query))
    copy = f"COPY ({query.strip().rstrip(';')}) TO STDOUT WITH (FORMAT csv, HEADER, NULL '\\N')"
    ret = _psql(c, f"START TRANSACTION READ WRITE;\n{copy};\nCOMMIT;")
    if ret["retcode"] != 0:
        return []
    import csv
    import io

    rows = [r for r in csv.reader(io.StringIO(ret["stdout"])) if r]
    return _text([dict(zip(rows[0], r)) for r in rows[1:]]) if rows else []
