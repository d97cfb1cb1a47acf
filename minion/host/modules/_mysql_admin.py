"""Part of the ``mysql`` execution module (a private sibling ``mysql.py`` imports):
grants, server status, replication facts, variables, processes, plugins and
table maintenance. The module's own public functions it needs (``version``,
``user_exists``, ``db_tables``) it calls through ``__salt__``, as modules do."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Literal

from briny.minion.host import mysqlsql
from briny.minion.host.mysqlsql import account, ident, literal

from ._mysql_client import _context, _error, _ok, _rows

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

# errors that mean "no connection" (Salt's functions then return their empty value, not False)
_CONNECT_ERRORS = ("MySQL Error 1045:", "MySQL Error 2002:", "MySQL Error 2003:", "MySQL Error 2005:")


def _connect_failed() -> bool:
    return str(_context().get("mysql.error") or "").startswith(_CONNECT_ERRORS)


# ---------------------------------------------------------------- grants


def tokenize_grant(grant: str, **kwargs: Any) -> dict[str, Any]:
    """``{user, host, grant, database}`` of a GRANT statement (as ``user_grants`` lists them)."""
    return mysqlsql.tokenize_grant(grant)


def user_grants(user: str, host: str = "localhost", **connection_args: Any) -> list[str] | Literal[False]:
    """The GRANT lines of ``user@host`` (SHOW GRANTS, passwords cut off); False when it does not exist."""
    if not __salt__["mysql.user_exists"](user, host, **connection_args):
        log.info("User '%s'@'%s' does not exist", user, host)
        return False
    rows = _rows(f"SHOW GRANTS FOR {account(user, host)}", **connection_args)
    if rows is None:
        return False
    ret = []
    for row in rows:
        line = str(next(iter(row.values())))
        short = line.split(" IDENTIFIED BY")[0]
        if "WITH GRANT OPTION" in line and "WITH GRANT OPTION" not in short:
            short += " WITH GRANT OPTION"
        ret.append(short)
    return ret


def _server_all_privileges(**connection_args: Any) -> list[str] | None:
    rows = _rows("SHOW PRIVILEGES", **connection_args)
    names = [str(r.get("Privilege", "")).strip().upper() for r in rows or []]
    return [n for n in names if n and n not in ("USAGE", "GRANT OPTION", "PROXY")] or None


def grant_exists(
    grant: str,
    database: str,
    user: str,
    host: str = "localhost",
    grant_option: Any = False,
    escape: bool = True,
    **connection_args: Any,
) -> bool:
    """Whether ``user@host`` holds ``grant`` (every privilege named) on ``database`` (``db.table``)."""
    server_version = __salt__["mysql.version"](**connection_args)
    if not server_version:
        log.error(
            'MySQL Error: Unable to fetch current server version. Last error was: "%s"', _context().get("mysql.error")
        )
        return False
    grant = str(grant)
    wanted: list[str] | None = None
    if (
        "ALL" in grant.upper()
        and "MariaDB" not in server_version
        and mysqlsql.version_tuple(server_version) >= (8, 0)
        and database == "*.*"
    ):
        wanted = _server_all_privileges(**connection_args)
    elif "ALL" in grant.upper():
        grant = "ALL PRIVILEGES"
    if wanted is None:
        try:
            stmt = mysqlsql.grant_statement(grant, database, user, host, grant_option, escape)
        except mysqlsql.GrantError as exc:
            log.error("Error during grant generation.")
            log.error(exc)
            return False
        target = mysqlsql.tokenize_grant(stmt)
        target["user"], target["host"] = user, host
    else:
        target = {"user": user, "host": host, "grant": wanted, "database": database}
    lines = user_grants(user, host, **connection_args)
    if lines is False:
        log.error(
            "Grant does not exist or may not be ordered properly. In some cases, this could also indicate a "
            "connection error. Check your configuration."
        )
        return False
    held: dict[str, dict[str, Any]] = {}
    for line in lines:
        tok = mysqlsql.tokenize_grant(line)
        tok["grant"] = mysqlsql.resolve_aliases(tok["grant"], server_version)
        if tok["database"] in held:
            held[tok["database"]]["grant"].extend(tok["grant"])
        else:
            held[tok["database"]] = tok
    want = mysqlsql.resolve_aliases(target["grant"], server_version)
    strip = mysqlsql.strip_quotes
    for tok in held.values():
        if (
            strip(tok["user"]) == strip(target["user"])
            and strip(tok["database"]) == strip(target["database"])
            and strip(tok["host"]) == strip(target["host"])
            and all(w in tok["grant"] for w in want)
        ):
            return True
    return False


def grant_add(
    grant: str,
    database: str,
    user: str,
    host: str = "localhost",
    grant_option: Any = False,
    escape: bool = True,
    ssl_option: Any = False,
    **connection_args: Any,
) -> bool:
    """GRANT ``grant`` ON ``database`` TO ``user@host``; True when the grant then exists."""
    try:
        stmt = mysqlsql.grant_statement(str(grant).strip(), database, user, host, grant_option, escape, ssl_option)
    except mysqlsql.GrantError as exc:
        log.error("Error during grant generation: %s", exc)
        return False
    if not _ok(stmt, **connection_args):
        return False
    if grant_exists(grant, database, user, host, grant_option, escape, **connection_args):
        log.info("Grant '%s' on '%s' for user '%s' has been added", grant, database, user)
        return True
    log.info("Grant '%s' on '%s' for user '%s' has NOT been added", grant, database, user)
    return False


def grant_revoke(
    grant: str,
    database: str,
    user: str,
    host: str = "localhost",
    grant_option: Any = False,
    escape: bool = True,
    **connection_args: Any,
) -> bool:
    """REVOKE ``grant`` (and the grant option with ``grant_option``); True when it is gone."""
    try:
        stmt = mysqlsql.revoke_statement(str(grant), database, user, host, grant_option)
    except mysqlsql.GrantError as exc:
        _error(f"MySQL Error: {exc}")
        return False
    if not _ok(stmt, **connection_args):
        return False
    if not grant_exists(grant, database, user, host, grant_option, escape, **connection_args):
        log.info("Grant '%s' on '%s' for user '%s' has been revoked", grant, database, user)
        return True
    log.info("Grant '%s' on '%s' for user '%s' has NOT been revoked", grant, database, user)
    return False


# ---------------------------------------------------------------- server facts


def status(**connection_args: Any) -> dict[str, str]:
    """SHOW STATUS as ``{Variable_name: Value}``."""
    rows = _rows("SHOW STATUS", **connection_args)
    return {r["Variable_name"]: r["Value"] for r in rows or []}


def _first_row(sql: str, connection_args: dict[str, Any]) -> Any:
    rows = _rows(sql, **connection_args)
    if rows is None:
        return []
    return rows[0] if rows else []


def get_master_status(**connection_args: Any) -> Any:
    """SHOW MASTER STATUS as a dict (File, Position, ...); [] when the server is not a master or unreachable."""
    return _first_row("SHOW MASTER STATUS", connection_args)


def get_slave_status(**connection_args: Any) -> Any:
    """SHOW SLAVE STATUS as a dict; [] when the server is not a replica or unreachable."""
    return _first_row("SHOW SLAVE STATUS", connection_args)


def slave_lag(**connection_args: Any) -> Any:
    """Seconds behind the master; -1 not a replica, -2 replication stopped, -3 no connection."""
    rows = _rows("SHOW SLAVE STATUS", **connection_args)
    if rows is None:
        return -3
    if not rows:
        return -1
    if rows[0].get("Slave_IO_Running") == "Yes":
        lag = rows[0].get("Seconds_Behind_Master")
        return int(lag) if lag not in (None, "") else lag
    return -2


def showvariables(**connection_args: Any) -> list[Any]:  # [[]] when it fails, as Salt
    rows: list[Any] | None = _rows("SHOW VARIABLES", **connection_args)
    return rows or [[]]


def showglobal(**connection_args: Any) -> list[Any]:  # [[]] when it fails, as Salt
    rows: list[Any] | None = _rows("SHOW GLOBAL VARIABLES", **connection_args)
    return rows or [[]]


def processlist(**connection_args: Any) -> list[dict[str, Any]]:
    return _rows("SHOW FULL PROCESSLIST", **connection_args) or []


# ---------------------------------------------------------------- plugins


def plugins_list(**connection_args: Any) -> list[dict[str, str]]:
    rows = _rows("SHOW PLUGINS", **connection_args)
    return [{"name": r["Name"], "status": r["Status"]} for r in rows or []]


def plugin_status(name: str, **connection_args: Any) -> str | bool:
    """The plugin's status (ACTIVE, ...), '' when it is not installed or the server is unreachable."""
    if not name:
        log.error("Plugin name is required.")
        return False
    rows = _rows(
        f"SELECT PLUGIN_STATUS FROM INFORMATION_SCHEMA.PLUGINS WHERE PLUGIN_NAME = {literal(name)}", **connection_args
    )
    return rows[0]["PLUGIN_STATUS"] if rows else ""


def plugin_add(name: str, soname: Any = None, **connection_args: Any) -> bool:
    if not name:
        log.error("Plugin name is required.")
        return False
    if plugin_status(name, **connection_args):
        log.error("Plugin %s is already installed.", name)
        return True
    return _ok(f"INSTALL PLUGIN {ident(name)} SONAME {literal(soname or f'{name}.so')}", **connection_args)


def plugin_remove(name: str, **connection_args: Any) -> bool:
    if not name:
        log.error("Plugin name is required.")
        return False
    if not plugin_status(name, **connection_args):
        log.error("Plugin %s is not installed.", name)
        return True
    return _ok(f"UNINSTALL PLUGIN {ident(name)}", **connection_args)


# ---------------------------------------------------------------- table maintenance


def _tables_do(verb: str, name: str, table: Any, connection_args: dict[str, Any]) -> Any:
    def one(tbl: str) -> list[dict[str, Any]]:
        log.info("%s table '%s' in db '%s'..", verb.capitalize(), tbl, name)
        return _rows(f"{verb} TABLE {ident(name)}.{ident(tbl)}", **connection_args) or []

    if table is not None:
        return one(table)
    tables = __salt__["mysql.db_tables"](name, **connection_args)
    return [one(t) for t in tables or []]


def db_check(name: str, table: Any = None, **connection_args: Any) -> Any:
    """CHECK TABLE on one table or every table of the database."""
    return _tables_do("CHECK", name, table, connection_args)


def db_repair(name: str, table: Any = None, **connection_args: Any) -> Any:
    return _tables_do("REPAIR", name, table, connection_args)


def db_optimize(name: str, table: Any = None, **connection_args: Any) -> Any:
    return _tables_do("OPTIMIZE", name, table, connection_args)
