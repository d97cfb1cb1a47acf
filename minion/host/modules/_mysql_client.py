"""The ``mysql`` execution module's client (a private sibling of ``mysql.py``, which imports it,
as ``_mysql_admin.py`` does): connection settings, running the ``mariadb``/``mysql`` client and
reading its answers."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Any

from briny.minion.host import mysqlsql

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __salt__


log = logging.getLogger(__name__)


_CONN_ARGS = {
    "connection_host": ("mysql.host", "host"),
    "connection_user": ("mysql.user", "user"),
    "connection_pass": ("mysql.pass", "password"),
    "connection_port": ("mysql.port", "port"),
    "connection_db": ("mysql.db", "database"),
    "connection_unix_socket": ("mysql.unix_socket", "socket"),
    "connection_charset": ("mysql.charset", "default-character-set"),
}


_IGNORED_CONN_ARGS = ("connection_default_group", "connection_conv", "connection_ssl", "client_flags")


_CONNECT_TIMEOUT = 10


def _client_bin() -> str | None:
    return shutil.which("mariadb") or shutil.which("mysql")


def _option(key: str) -> Any:
    return __salt__["config.option"](key, None)


def _context() -> dict[str, Any]:
    return __context__


def _error(msg: str) -> None:
    _context()["mysql.error"] = msg
    log.error(msg)


def _settings(connection_args: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The client options of a call (arguments, else config keys) and the default file to include."""
    ignored = [k for k in connection_args if not str(k).startswith("__") and k not in _CONN_ARGS]
    ignored = [k for k in ignored if k != "connection_default_file"]
    if ignored:
        log.warning("mysql: these arguments are not connection arguments and were ignored: %s", ", ".join(ignored))
    use_config = "connection_default_file" not in connection_args
    settings: dict[str, Any] = {}
    for arg, (key, opt) in _CONN_ARGS.items():
        if arg in connection_args:
            settings[opt] = connection_args[arg]
        elif use_config or arg == "connection_charset":
            settings[opt] = _option(key)
    default_file = connection_args.get("connection_default_file") if not use_config else _option("mysql.default_file")
    settings = {k: v for k, v in settings.items() if v not in (None, "")}
    settings["connect-timeout"] = _CONNECT_TIMEOUT
    return settings, (str(default_file) if default_file else None)


def _run(sql: str, db: str | None = None, **connection_args: Any) -> list[tuple[list[str], list[list[Any]]]] | None:
    """Run ``sql`` (statements separated by ``;``); the result sets, or None (``mysql.error`` set) on failure."""
    client = _client_bin()
    if not client:
        _error("MySQL Error: neither the mariadb nor the mysql client program was found")
        return None
    settings, default_file = _settings(connection_args)
    if db:
        settings["database"] = db
    try:
        text = mysqlsql.option_file(settings, default_file)
    except ValueError as exc:
        _error(f"MySQL Error: {exc}")
        return None
    fd, path = tempfile.mkstemp(prefix="briny-my-", suffix=".cnf")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        ret = __salt__["cmd.run_all"](
            [client, f"--defaults-file={path}", "--batch", "--xml"],
            python_shell=False,
            stdin=sql.rstrip().rstrip(";") + ";\n",
            ignore_retcode=True,
            output_loglevel="quiet",
            reset_system_locale=False,
        )
    finally:
        try:
            os.remove(path)
        except OSError:
            log.warning("Removing the client option file %s failed", path)
    if ret.get("retcode"):
        _error(mysqlsql.parse_error(ret.get("stderr") or ret.get("stdout") or ""))
        return None
    try:
        return mysqlsql.parse_xml(ret.get("stdout", ""))
    except Exception as exc:  # noqa: BLE001 - a malformed answer: name it, do not guess
        _error(f"MySQL Error: the client's answer could not be read: {exc}")
        return None


def _rows(sql: str, db: str | None = None, **connection_args: Any) -> list[dict[str, Any]] | None:
    """The rows of the last result set as dicts, or None on failure."""
    sets = _run(sql, db, **connection_args)
    if sets is None:
        return None
    if not sets:
        return []
    cols, rows = sets[-1]
    return [dict(zip(cols, row)) for row in rows]


def _ok(sql: str, db: str | None = None, **connection_args: Any) -> bool:
    return _run(sql, db, **connection_args) is not None
