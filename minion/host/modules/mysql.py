"""Execution module ``mysql``: MySQL/MariaDB databases, users, grants and server facts.

Runs on the minion (and ``briny-call``). Salt 3007's module talks to the
server through a Python driver (MySQLdb or PyMySQL); briny drives the
``mariadb`` (or ``mysql``) command-line client through ``cmd.run_all``
instead, so it needs no driver and no extra dependency: each call is one
client process reading SQL on its standard input and answering in XML. The
functions, arguments and return values are Salt's; statements and grant
parsing are in :mod:`briny.minion.host.mysqlsql`. Grants, server facts and
plugins are in ``_mysql_admin.py`` (a part of this module).

**Connection.** Every function takes Salt's ``connection_host``,
``connection_port``, ``connection_user``, ``connection_pass``,
``connection_db``, ``connection_unix_socket``, ``connection_charset`` and
``connection_default_file`` keyword arguments; a missing one comes from the
config/pillar key ``mysql.host``, ``mysql.port``, ``mysql.user``,
``mysql.pass``, ``mysql.db``, ``mysql.unix_socket``, ``mysql.charset``,
``mysql.default_file`` (``config.option``), except that, as in Salt, a
``connection_default_file`` argument turns the config keys off. The
settings reach the client in a private option file (mode 0600, removed
after the call; the default file is ``!include``-d first), never on its
command line; no other option file is read (``--defaults-file``), as the
drivers read none. ``connection_default_group`` and ``client_flags`` have
no client equivalent: they are named in a warning and ignored; so is any
other argument that is not a connection argument.

**Errors**, as in Salt: a failure sets ``__context__["mysql.error"]`` to
``MySQL Error <code>: <message>`` (the server's code and words) and the
function returns its "nothing" value; the states show that text. Without
a client program the module does not load: ``The mysql execution module
cannot be loaded: neither the mariadb nor the mysql client program was
found`` (Salt says it lacks a Python driver).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from briny.minion.host import mysqlsql
from briny.minion.host.mysqlsql import account, ident, literal

from ._mysql_admin import (
    _connect_failed,
    db_check,
    db_optimize,
    db_repair,
    get_master_status,
    get_slave_status,
    grant_add,
    grant_exists,
    grant_revoke,
    plugin_add,
    plugin_remove,
    plugin_status,
    plugins_list,
    processlist,
    showglobal,
    showvariables,
    slave_lag,
    status,
    tokenize_grant,
    user_grants,
)
from ._mysql_client import (
    _client_bin,
    _context,
    _error,
    _ok,
    _rows,
    _run,
)
from briny.common.truth import is_true as _is_true

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

__all__ = [
    "alter_db",
    "db_check",
    "db_create",
    "db_exists",
    "db_get",
    "db_list",
    "db_optimize",
    "db_remove",
    "db_repair",
    "db_tables",
    "file_query",
    "get_master_status",
    "get_slave_status",
    "grant_add",
    "grant_exists",
    "grant_revoke",
    "plugin_add",
    "plugin_remove",
    "plugin_status",
    "plugins_list",
    "processlist",
    "query",
    "quote_identifier",
    "showglobal",
    "showvariables",
    "slave_lag",
    "status",
    "tokenize_grant",
    "user_chpass",
    "user_create",
    "user_exists",
    "user_grants",
    "user_info",
    "user_list",
    "user_remove",
    "verify_login",
    "version",
]

__virtualname__ = "mysql"

# connection argument -> (config key, client option)


def __virtual__() -> Any:
    if not _client_bin():
        return (
            False,
            "The mysql execution module cannot be loaded: neither the mariadb nor the mysql client program was found",
        )
    return __virtualname__


def quote_identifier(identifier: Any, for_grants: bool = False, **kwargs: Any) -> str:
    """```identifier``` as Salt quotes it (``for_grants``: ``_`` escaped, as in a GRANT's database)."""
    return mysqlsql.quote_identifier(identifier, for_grants)


# ---------------------------------------------------------------- server


def version(**connection_args: Any) -> str:
    """The server's version (``SELECT VERSION()``), '' when it does not answer; kept for the run."""
    if "mysql.version" in _context():
        return _context()["mysql.version"]
    rows = _rows("SELECT VERSION() AS v", **connection_args)
    if not rows:
        return ""
    _context()["mysql.version"] = rows[0]["v"]
    return rows[0]["v"]


def query(database: str, query: str, **connection_args: Any) -> dict[str, Any] | bool:
    """Run one statement in ``database``: a SELECT/SHOW/DESC gives its rows, others the rows affected."""
    import time

    start = time.time()
    select = query.upper().strip().startswith(("SELECT", "SHOW", "DESC"))
    sql = query if select else f"{query.rstrip().rstrip(';')};\nSELECT ROW_COUNT() AS briny_affected"
    sets = _run(sql, database or None, **connection_args)
    if sets is None:
        return {} if _connect_failed() else False
    elapsed = time.time() - start
    ret: dict[str, Any] = {
        "query time": {
            "human": f"{round(elapsed * 1000, 1)}ms" if elapsed < 0.2 else f"{round(elapsed, 2)}s",
            "raw": str(round(elapsed, 5)),
        }
    }
    if select:
        cols, rows = sets[-1] if sets else ([], [])
        ret["rows returned"] = len(rows)
        ret["columns"] = tuple(cols)
        ret["results"] = tuple(tuple(r) for r in rows)
    else:
        affected = sets[-1][1][0][0] if sets and sets[-1][1] else 0
        ret["rows affected"] = max(int(affected or 0), 0)
    return ret


def file_query(database: str, file_name: str, **connection_args: Any) -> dict[str, Any] | bool:
    """Run the statements of a file (local path or ``salt://``), one ``query`` each; their sums."""
    if file_name.startswith(("salt://", "http://", "https://", "swift://", "s3://")):
        file_name = __salt__["cp.cache_file"](file_name)
    if not file_name or not os.path.exists(file_name):
        log.error('File "%s" does not exist', file_name)
        return False
    with open(file_name, encoding="utf-8") as fh:
        contents = fh.read()
    ret: dict[str, Any] = {
        "rows returned": 0,
        "columns": [],
        "results": [],
        "rows affected": 0,
        "query time": {"raw": 0},
    }
    for stmt in _statements(contents):
        res = query(database, stmt, **connection_args)
        if res is False or not isinstance(res, dict):
            return False
        ret["query time"]["raw"] += float(res.get("query time", {}).get("raw", 0))
        ret["rows returned"] += res.get("rows returned", 0)
        if "columns" in res:
            ret["columns"].append(res["columns"])
        if "results" in res:
            ret["results"].append(res["results"])
        ret["rows affected"] += res.get("rows affected", 0)
    ret["query time"]["human"] = f"{round(float(ret['query time']['raw']), 2)}s"
    return ret


def _statements(text: str) -> list[str]:
    """SQL text split into statements: comments dropped, ``;`` outside quotes ends one."""
    out, cur, quote, i = [], [], "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
            cur.append(ch)
        elif text.startswith("--", i) or ch == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
            continue
        elif ch == ";":
            if "".join(cur).strip():
                out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


# ---------------------------------------------------------------- databases


def db_list(**connection_args: Any) -> list[str]:
    rows = _rows("SHOW DATABASES", **connection_args)
    return [next(iter(r.values())) for r in rows or []]


def db_get(name: str, **connection_args: Any) -> dict[str, str] | list:
    """``{character_set, collate}`` of the database; {} when it does not exist, [] on failure."""
    rows = _rows(
        "SELECT DEFAULT_CHARACTER_SET_NAME AS cs, DEFAULT_COLLATION_NAME AS co FROM INFORMATION_SCHEMA.SCHEMATA "
        f"WHERE SCHEMA_NAME = {literal(name)}",
        **connection_args,
    )
    if rows is None:
        return []
    return {"character_set": rows[0]["cs"], "collate": rows[0]["co"]} if rows else {}


def db_exists(name: str, **connection_args: Any) -> bool:
    pattern = str(name).replace("\\", "\\\\").replace("_", "\\_").replace("%", "\\%")
    rows = _rows(f"SHOW DATABASES LIKE {literal(pattern)}", **connection_args)
    return rows is not None and len(rows) == 1


def db_tables(name: str, **connection_args: Any) -> list[str] | bool:
    if not db_exists(name, **connection_args):
        log.info("Database '%s' does not exist", name)
        return False
    rows = _rows(f"SHOW TABLES IN {ident(name)}", **connection_args)
    return [next(iter(r.values())) for r in rows or []]


def db_create(name: str, character_set: Any = None, collate: Any = None, **connection_args: Any) -> bool:
    """CREATE DATABASE (with a character set and collation); False when it exists or failed."""
    if db_exists(name, **connection_args):
        log.info("DB '%s' already exists", name)
        return False
    sql = f"CREATE DATABASE IF NOT EXISTS {ident(name)}"
    if character_set is not None:
        sql += f" CHARACTER SET {literal(character_set)}"
    if collate is not None:
        sql += f" COLLATE {literal(collate)}"
    if _ok(sql, **connection_args):
        log.info("DB '%s' created", name)
        return True
    return False


def alter_db(name: str, character_set: Any = None, collate: Any = None, **connection_args: Any) -> bool:
    existing = db_get(name, **connection_args)
    if not isinstance(existing, dict):
        return False
    cs = character_set or existing.get("character_set")
    co = collate or existing.get("collate")
    if _ok(f"ALTER DATABASE {ident(name)} CHARACTER SET {literal(cs)} COLLATE {literal(co)}", **connection_args):
        log.info("DB '%s' altered", name)
        return True
    return False


def db_remove(name: str, **connection_args: Any) -> bool:
    """DROP DATABASE (never ``mysql`` or ``information_schema``); True when it is gone."""
    if not db_exists(name, **connection_args):
        log.info("DB '%s' does not exist", name)
        return False
    if name in ("mysql", "information_schema"):
        log.info("DB '%s' may not be removed", name)
        return False
    if not _ok(f"DROP DATABASE {ident(name)}", **connection_args):
        return False
    return not db_exists(name, **connection_args)


# ---------------------------------------------------------------- users


def user_list(**connection_args: Any) -> list[dict[str, str]]:
    return _rows("SELECT User, Host FROM mysql.user", **connection_args) or []


def user_info(user: str, host: str = "localhost", **connection_args: Any) -> dict[str, Any] | bool | None:
    rows = _rows(f"SELECT * FROM mysql.user WHERE User = {literal(user)} AND Host = {literal(host)}", **connection_args)
    if rows is None:
        return False
    return rows[0] if rows else None


def _server_version(password: Any, connection_args: dict[str, Any]) -> str | None:
    """The version; as Salt does, retried with the user's own password when the first try fails."""
    server_version = version(**connection_args)
    if not server_version and password:
        _context()["mysql.error"] = None
        connection_args["connection_pass"] = password
        server_version = version(**connection_args)
        if not server_version:
            log.error(
                'MySQL Error: Unable to fetch current server version. Last error was: "%s"',
                _context().get("mysql.error"),
            )
            return None
    return server_version


def _password_column(**connection_args: Any) -> str:
    if "mysql.password_column" in _context():
        return _context()["mysql.password_column"]
    rows = _rows(
        "SELECT column_name FROM information_schema.COLUMNS WHERE table_schema = 'mysql' "
        "AND table_name = 'user' AND column_name = 'Password'",
        **connection_args,
    )
    if rows is None:
        return "Password"
    _context()["mysql.password_column"] = "Password" if rows else "authentication_string"
    return _context()["mysql.password_column"]


def _auth_plugin(user: str, host: str, **connection_args: Any) -> str:
    rows = _rows(
        f"SELECT plugin FROM mysql.user WHERE User = {literal(user)} AND Host = {literal(host)}", **connection_args
    )
    return (rows[0].get("plugin") or "mysql_native_password") if rows else "mysql_native_password"


def _native_hash(password: str) -> str:
    import hashlib

    return "*" + hashlib.sha1(hashlib.sha1(password.encode()).digest()).hexdigest().upper()  # noqa: S324 - the format


def user_exists(
    user: str,
    host: str = "localhost",
    password: Any = None,
    password_hash: Any = None,
    passwordless: bool = False,
    unix_socket: bool = False,
    password_column: Any = None,
    **connection_args: Any,
) -> bool:
    """Whether ``user@host`` exists (with this password, hash, no password, or unix_socket auth)."""
    server_version = _server_version(password, connection_args)
    if server_version is None:
        return False
    column = password_column or _password_column(**connection_args)
    sql = f"SELECT User, Host FROM mysql.user WHERE User = {literal(user)} AND Host = {literal(host)}"
    mariadb = "MariaDB" in server_version
    if _is_true(passwordless):
        if _is_true(unix_socket):
            sql += f" AND plugin = {literal('unix_socket' if mariadb else 'auth_socket')}"
        else:
            sql += f" AND {ident(column)} = ''"
    elif password:
        if mariadb or mysqlsql.version_tuple(server_version) < (8, 0, 11):
            sql += f" AND {ident(column)} = PASSWORD({literal(password)})"
        elif _auth_plugin(user, host, **connection_args) == "mysql_native_password":
            sql += f" AND {ident(column)} = {literal(_native_hash(str(password)))}"
        else:
            _error("Unable to verify password.")
    elif password_hash:
        sql += f" AND {ident(column)} = {literal(password_hash)}"
    rows = _rows(sql, **connection_args)
    return rows is not None and len(rows) == 1


def _auth_clause(server_version: str, password: Any, password_hash: Any, auth_plugin: str) -> str | None:
    mysql8 = "MariaDB" not in server_version and mysqlsql.version_tuple(server_version) >= (8, 0, 11)
    if password is not None:
        if mysql8:
            return f" IDENTIFIED WITH {ident(auth_plugin)} BY {literal(password)}"
        return f" IDENTIFIED BY {literal(password)}"
    if password_hash is not None:
        if mysql8:
            return f" IDENTIFIED WITH {ident(auth_plugin)} AS {literal(password_hash)}"
        return f" IDENTIFIED BY PASSWORD {literal(password_hash)}"
    return None


def user_create(
    user: str,
    host: str = "localhost",
    password: Any = None,
    password_hash: Any = None,
    allow_passwordless: bool = False,
    unix_socket: bool = False,
    password_column: Any = None,
    auth_plugin: str = "mysql_native_password",
    **connection_args: Any,
) -> bool:
    """CREATE USER with a password, a hash, no password (``allow_passwordless``) or unix_socket auth."""
    server_version = _server_version(password, connection_args)
    if server_version is None:
        return False
    if user_exists(user, host, **connection_args):
        log.info("User '%s'@'%s' already exists", user, host)
        return False
    mariadb = "MariaDB" in server_version
    sql = f"CREATE USER {account(user, host)}"
    if unix_socket:
        plugin = "unix_socket" if mariadb else "auth_socket"
        if not plugin_status(plugin, **connection_args):
            _error(f"The {plugin} plugin is not enabled.")
            return False
        if host != "localhost":
            _error("Auth via unix_socket can be set only for host=localhost")
            return False
        sql += f" IDENTIFIED {'VIA' if mariadb else 'WITH'} {plugin}"
    elif not _is_true(allow_passwordless):
        clause = _auth_clause(server_version, password, password_hash, auth_plugin)
        if clause is None:
            log.error("password or password_hash must be specified, unless allow_passwordless=True")
            return False
        sql += clause
    if not _ok(sql, **connection_args):
        return False
    if user_exists(user, host, password, password_hash, password_column=password_column, **connection_args):
        log.info("User '%s'@'%s' has been created", user, host)
        return True
    log.info("User '%s'@'%s' was not created", user, host)
    return False


def user_chpass(
    user: str,
    host: str = "localhost",
    password: Any = None,
    password_hash: Any = None,
    allow_passwordless: bool = False,
    unix_socket: Any = None,
    password_column: Any = None,
    **connection_args: Any,
) -> bool:
    """Change (or, with ``allow_passwordless``, clear) the password of ``user@host``."""
    server_version = _server_version(password, connection_args)
    if server_version is None:
        return False
    if not user_exists(user, host, **connection_args):
        log.info("User '%s'@'%s' does not exists", user, host)
        return False
    mariadb = "MariaDB" in server_version
    ver = mysqlsql.version_tuple(server_version)
    plugin = _auth_plugin(user, host, **connection_args)
    if password is not None:
        value = f"PASSWORD({literal(password)})" if mariadb or ver < (8, 0, 11) else literal(password)
    elif password_hash is not None:
        value = literal(password_hash)
    elif not _is_true(allow_passwordless):
        log.error("password or password_hash must be specified, unless allow_passwordless=True")
        return False
    else:
        value = "''"
    if _is_true(allow_passwordless) and _is_true(unix_socket) and host == "localhost":
        sock = "unix_socket" if mariadb else "auth_socket"
        if not plugin_status(sock, **connection_args):
            _error(f"The {sock} plugin is not enabled.")
            return False
        sql = f"ALTER USER {account(user, host)} IDENTIFIED {'VIA' if mariadb else 'WITH'} {sock}"
    elif mariadb and ver >= (10, 4):
        sql = f"ALTER USER {account(user, host)} IDENTIFIED VIA {ident(plugin)} USING {value}"
    elif not mariadb and ver >= (8, 0, 11):
        how = "BY" if password is not None else "AS"
        sql = f"ALTER USER {account(user, host)} IDENTIFIED WITH {ident(plugin)} {how} {value}"
    else:
        column = ident(password_column or _password_column(**connection_args))
        sql = f"UPDATE mysql.user SET {column} = {value} WHERE User = {literal(user)} AND Host = {literal(host)}"
    if not _ok(f"{sql};\nFLUSH PRIVILEGES", **connection_args):
        return False
    log.info(
        "Password for user '%s'@'%s' has been %s", user, host, "changed" if password or password_hash else "cleared"
    )
    return True


def user_remove(user: str, host: str = "localhost", **connection_args: Any) -> bool:
    """DROP USER; True when it is gone."""
    if not user_exists(user, host, **connection_args):
        log.info("User '%s'@'%s' does not exists", user, host)
        return False
    if not _ok(f"DROP USER {account(user, host)}", **connection_args):
        return False
    if not user_exists(user, host, **connection_args):
        log.info("User '%s'@'%s' has been removed", user, host)
        return True
    return False


def verify_login(user: str, password: Any = None, **connection_args: Any) -> bool:
    """Whether ``user`` can log in with ``password``."""
    connection_args["connection_user"] = user
    connection_args["connection_pass"] = password
    if _run("SELECT 1", **connection_args) is None:
        _context().pop("mysql.error", None)
        return False
    return True
