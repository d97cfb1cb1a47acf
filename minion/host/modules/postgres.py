"""Execution module ``postgres``: PostgreSQL roles, databases, tablespaces, extensions, schemas, privileges.

Runs on the minion (and ``briny-call``) and drives the ``psql`` client
through ``cmd.run_all``, as Salt 3007's module does, so it needs no Python
driver. Functions, arguments and return values are Salt's; the objects'
SQL is built in :mod:`briny.minion.host.pgsql`. Connections and running ``psql`` are in
``_postgres_client.py``; extensions, schemas, languages, privileges and data
directories in ``_postgres_objects.py`` (private siblings this module imports;
their public functions are this module's).

**Connection.** Each function takes the keyword arguments ``user``,
``host``, ``port``, ``maintenance_db``, ``password`` and ``runas`` (the
schema functions ``db_user``, ``db_host``, ``db_port``, ``db_password`` and
``user`` for runas, as in Salt); unlike Salt's, they are keyword-only, and
another keyword argument is named in a warning and ignored. A missing one comes from the config/pillar keys
``postgres.user``, ``postgres.host``, ``postgres.port``,
``postgres.maintenance_db`` (default ``postgres``) and ``postgres.pass``
(``config.option``). Without a host, or with a socket directory as host,
``psql`` runs as the system user ``postgres`` unless ``runas`` says
otherwise. ``postgres.bins_dir`` says where ``psql`` is, ``postgres.timeout``
bounds each call (seconds, 0: none).

**Differences from Salt, on purpose.** SQL goes to ``psql`` on its
standard input (never on its command line, where other users could read a
password verifier) and names are quoted and escaped, not pasted; a password
is handed over in a private ``PGPASSFILE`` with its ``:`` and ``\\``
escaped; ``PGCONNECT_TIMEOUT`` is 10 s so an unreachable host fails the
call instead of hanging. As in Salt, a read that fails (no server, a wrong
password) logs the error and reads as "nothing there", so a state in test
mode says what it would create; the change itself then fails.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

from briny.common.exceptions import CommandExecutionError
from briny.minion.host import pgsql
from briny.minion.host.pgsql import ident, literal

from ._postgres_client import (
    _bool,
    _conn,
    _find_pg_binary,
    _psql,
    _rows,
    _run,
    psql_query,
)

from ._postgres_objects import (
    available_extensions,
    installed_extensions,
    get_available_extension,
    get_installed_extension,
    is_available_extension,
    is_installed_extension,
    create_metadata,
    create_extension,
    drop_extension,
    schema_list,
    schema_get,
    schema_exists,
    schema_create,
    schema_remove,
    language_list,
    language_exists,
    language_create,
    language_remove,
    privileges_list,
    has_privileges,
    privileges_grant,
    privileges_revoke,
    datadir_exists,
    datadir_init,
)

log = logging.getLogger(__name__)

__all__ = [
    "available_extensions",
    "create_extension",
    "create_metadata",
    "datadir_exists",
    "datadir_init",
    "db_alter",
    "db_create",
    "db_exists",
    "db_list",
    "db_remove",
    "drop_extension",
    "encrypt_password",
    "get_available_extension",
    "get_installed_extension",
    "group_create",
    "group_remove",
    "group_update",
    "has_privileges",
    "installed_extensions",
    "is_available_extension",
    "is_installed_extension",
    "language_create",
    "language_exists",
    "language_list",
    "language_remove",
    "owner_to",
    "privileges_grant",
    "privileges_list",
    "privileges_revoke",
    "psql_query",
    "role_get",
    "schema_create",
    "schema_exists",
    "schema_get",
    "schema_list",
    "schema_remove",
    "tablespace_alter",
    "tablespace_create",
    "tablespace_exists",
    "tablespace_list",
    "tablespace_remove",
    "user_create",
    "user_exists",
    "user_list",
    "user_remove",
    "user_update",
    "verify_password",
    "version",
]

__virtualname__ = "postgres"


def __virtual__() -> Any:
    if not _find_pg_binary("psql"):
        return (False, "psql was not found")
    return __virtualname__


# ---------------------------------------------------------------- passwords (briny's own functions)


def encrypt_password(role: str, password: Any, encrypted: Any = "md5", **kwargs: Any) -> str | None:
    """The verifier PostgreSQL stores for ``password`` (``encrypted``: md5, scram-sha-256, False: clear).

    Not in Salt (its state modules import the module's private helper): the
    ``postgres_user`` / ``postgres_group`` states call it through ``__salt__``.
    """
    return pgsql.encrypt_password(role, password, encrypted)


def verify_password(role: str, password: Any, verifier: Any, encrypted: Any = "md5", **kwargs: Any) -> bool:
    """Whether the stored ``verifier`` already holds ``password`` (briny's own, see :func:`encrypt_password`)."""
    return pgsql.password_matches(role, password, verifier, encrypted)


# ---------------------------------------------------------------- server


def version(
    **conn: Any,
) -> str | None:
    """The server's version (``server_version``), None when the server does not answer."""
    c = _conn(**conn)
    rows = _rows(c, "SELECT setting FROM pg_catalog.pg_settings WHERE name = 'server_version'")
    return rows[0]["setting"] if rows else None


# ---------------------------------------------------------------- databases


def db_list(
    **conn: Any,
) -> dict[str, dict[str, str]]:
    """``{name: {Owner, Encoding, Collate, Ctype, Access privileges, Tablespace}}``."""
    rows = psql_query(
        'SELECT datname AS "Name", pga.rolname AS "Owner", pg_encoding_to_char(encoding) AS "Encoding", '
        'datcollate AS "Collate", datctype AS "Ctype", datacl AS "Access privileges", spcname AS "Tablespace" '
        "FROM pg_database pgd, pg_roles pga, pg_tablespace pgts "
        "WHERE pga.oid = pgd.datdba AND pgts.oid = pgd.dattablespace",
        **conn,
    )
    return {row.pop("Name"): row for row in rows}


def db_exists(
    name: str,
    **conn: Any,
) -> bool:
    return name in db_list(**conn)


def db_create(
    name: str,
    tablespace: Any = None,
    encoding: Any = None,
    lc_collate: Any = None,
    lc_ctype: Any = None,
    owner: Any = None,
    template: Any = None,
    **conn: Any,
) -> bool:
    """``CREATE DATABASE`` with the options given; True when it was created."""
    opts = [
        ("TABLESPACE", tablespace and ident(tablespace)),
        ("OWNER", owner and ident(owner)),
        ("TEMPLATE", template and ident(template)),
        ("ENCODING", encoding and literal(encoding)),
        ("LC_COLLATE", lc_collate and literal(lc_collate)),
        ("LC_CTYPE", lc_ctype and literal(lc_ctype)),
    ]
    sql = f"CREATE DATABASE {ident(name)}"
    given = [f"{key} = {val}" for key, val in opts if val]
    if given:
        sql += " WITH " + " ".join(given)
    return _run(_conn(**conn), sql)


def db_alter(
    name: str,
    tablespace: Any = None,
    owner: Any = None,
    owner_recurse: bool = False,
    **conn: Any,
) -> bool:
    """Change the owner (with ``owner_recurse``, of everything in it too) and/or the tablespace."""
    if not (tablespace or owner):
        return True
    c = _conn(**conn)
    if owner and owner_recurse:
        return owner_to(name, owner, **{k: v for k, v in conn.items() if k != "maintenance_db"})["retcode"] == 0
    ok = True
    if owner:
        ok = _run(c, f"ALTER DATABASE {ident(name)} OWNER TO {ident(owner)}") and ok
    if tablespace:
        ok = _run(c, f"ALTER DATABASE {ident(name)} SET TABLESPACE {ident(tablespace)}") and ok
    return ok


def db_remove(
    name: str,
    **conn: Any,
) -> bool:
    """Close the database's sessions and drop it; raises CommandExecutionError when a step fails."""
    c = _conn(**conn)
    for sql in (
        f"REVOKE CONNECT ON DATABASE {ident(name)} FROM public",
        "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE datname = {literal(name)} AND pid <> pg_backend_pid()",
        f"DROP DATABASE {ident(name)}",
    ):
        ret = _psql(c, sql)
        if ret["retcode"] != 0:
            raise CommandExecutionError(f"Failed to remove database {name}: {ret.get('stderr', '').strip()}")
    return True


def owner_to(
    dbname: str,
    ownername: str,
    **conn: Any,
) -> dict[str, Any]:
    """Make ``ownername`` the owner of the database and of its schemas, tables, views, sequences, functions."""
    c = _conn(**{**conn, "maintenance_db": dbname})
    lists = (
        ("SCHEMA", "SELECT quote_ident(nspname) AS n FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
         "AND nspname <> 'information_schema'"),
        ("TABLE", "SELECT quote_ident(table_schema)||'.'||quote_ident(table_name) AS n FROM information_schema.tables "
         "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'"),
        ("VIEW", "SELECT quote_ident(table_schema)||'.'||quote_ident(table_name) AS n FROM information_schema.tables "
         "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'VIEW'"),
        ("SEQUENCE", "SELECT quote_ident(sequence_schema)||'.'||quote_ident(sequence_name) AS n "
         "FROM information_schema.sequences"),
        ("FUNCTION", "SELECT p.oid::regprocedure::text AS n FROM pg_proc p JOIN pg_namespace ns "
         "ON p.pronamespace = ns.oid WHERE ns.nspname NOT IN ('pg_catalog', 'information_schema') "
         "AND p.prokind = 'f'"),
        ("AGGREGATE", "SELECT p.oid::regprocedure::text AS n FROM pg_proc p JOIN pg_namespace ns "
         "ON p.pronamespace = ns.oid WHERE ns.nspname NOT IN ('pg_catalog', 'information_schema') "
         "AND p.prokind = 'a'"),
    )  # fmt: skip
    stmts = [f"ALTER DATABASE {ident(dbname)} OWNER TO {ident(ownername)};"]
    for kind, query in lists:
        for row in _rows(c, query) or []:
            stmts.append(f"ALTER {kind} {row['n']} OWNER TO {ident(ownername)};")
    return _psql(c, "\n".join(stmts), transaction=True)


# ---------------------------------------------------------------- tablespaces


def tablespace_list(
    **conn: Any,
) -> dict[str, dict[str, str]]:
    """``{name: {Owner, ACL, Opts, Location}}``."""
    rows = psql_query(
        'SELECT spcname AS "Name", pga.rolname AS "Owner", spcacl AS "ACL", spcoptions AS "Opts", '
        'pg_tablespace_location(pgts.oid) AS "Location" FROM pg_tablespace pgts, pg_roles pga '
        "WHERE pga.oid = pgts.spcowner",
        **conn,
    )
    return {row.pop("Name"): row for row in rows}


def tablespace_exists(
    name: str,
    **conn: Any,
) -> bool:
    return name in tablespace_list(**conn)


def _tablespace_options(options: Any) -> str:
    return ", ".join(f"{ident(k)[1:-1] if str(k).isidentifier() else ident(k)} = {v}" for k, v in dict(options).items())


def tablespace_create(
    name: str,
    location: str,
    options: Any = None,
    owner: Any = None,
    **conn: Any,
) -> bool:
    """``CREATE TABLESPACE name [OWNER o] LOCATION 'dir' [WITH (opt = value, ...)]``."""
    sql = f"CREATE TABLESPACE {ident(name)}"
    if owner:
        sql += f" OWNER {ident(owner)}"
    sql += f" LOCATION {literal(location)}"
    if options:
        sql += f" WITH ({_tablespace_options(options)})"
    return _run(_conn(**conn), sql)


def tablespace_alter(
    name: str,
    new_name: Any = None,
    new_owner: Any = None,
    set_option: Any = None,
    reset_option: Any = None,
    **conn: Any,
) -> bool:
    """Rename, change the owner, set one option (``{opt: value}``) or reset one."""
    stmts = []
    if new_name:
        stmts.append(f"ALTER TABLESPACE {ident(name)} RENAME TO {ident(new_name)}")
    if new_owner:
        stmts.append(f"ALTER TABLESPACE {ident(name)} OWNER TO {ident(new_owner)}")
    if set_option:
        stmts.append(f"ALTER TABLESPACE {ident(name)} SET ({_tablespace_options(set_option)})")
    if reset_option:
        stmts.append(f"ALTER TABLESPACE {ident(name)} RESET ({reset_option})")
    c = _conn(**conn)
    return all(_run(c, sql) for sql in stmts)


def tablespace_remove(
    name: str,
    **conn: Any,
) -> bool:
    return _run(_conn(**conn), f"DROP TABLESPACE {ident(name)}")


# ---------------------------------------------------------------- roles

_ROLE_FLAGS = (
    ("superuser", "rolsuper"),
    ("inherits privileges", "rolinherit"),
    ("can create roles", "rolcreaterole"),
    ("can create databases", "rolcreatedb"),
    ("can login", "rolcanlogin"),
    ("replication", "rolreplication"),
)


def user_list(
    return_password: bool = False,
    **conn: Any,
) -> dict[str, dict[str, Any]] | bool:
    """Every role with its attributes (False when the server does not answer)."""
    c = _conn(**conn)
    cols = ", ".join(f"r.{col} AS {col}" for _, col in _ROLE_FLAGS)
    query = (
        f"SELECT r.rolname AS name, {cols}, r.rolconnlimit AS connections, "
        "(SELECT array_agg(g.rolname) FROM pg_catalog.pg_auth_members m JOIN pg_catalog.pg_roles g "
        "ON m.roleid = g.oid WHERE m.member = r.oid) AS groups, "
        "r.rolvaliduntil::timestamp(0) AS expiry, r.rolconfig AS defaults"
    )
    if return_password:
        query += (
            ", a.rolpassword AS password FROM pg_catalog.pg_roles r LEFT JOIN pg_catalog.pg_authid a ON r.oid = a.oid"
        )
    else:
        query += " FROM pg_catalog.pg_roles r"
    rows = _rows(c, query)
    if rows is None:
        log.error("Could not list the roles: is the PostgreSQL server running?")
        return False
    ret: dict[str, dict[str, Any]] = {}
    for row in rows:
        role: dict[str, Any] = {key: _bool(row[col]) for key, col in _ROLE_FLAGS}
        role["can update system catalogs"] = None
        role["connections"] = int(row["connections"]) if row["connections"] not in (None, "") else None
        try:
            role["expiry time"] = datetime.datetime.strptime(row["expiry"] or "", "%Y-%m-%d %H:%M:%S")
        except ValueError:
            role["expiry time"] = None
        role["defaults variables"] = row["defaults"] or ""
        if return_password:
            role["password"] = row["password"] or ""
        role["groups"] = pgsql.parse_array(row["groups"])
        ret[row["name"]] = role
    return ret


def role_get(
    name: str,
    return_password: bool = False,
    **conn: Any,
) -> dict[str, Any] | None:
    """One role's attributes (see :func:`user_list`), None when it does not exist."""
    roles = user_list(return_password=return_password, **conn)
    return roles.get(name) if isinstance(roles, dict) else None


def user_exists(
    name: str,
    **conn: Any,
) -> bool:
    return bool(role_get(name, **conn))


_ROLE_ARGS = (
    "createdb",
    "createroles",
    "inherit",
    "login",
    "connlimit",
    "encrypted",
    "superuser",
    "replication",
    "rolepassword",
    "valid_until",
)


def _role_args(kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any, dict[str, Any]]:
    """(role flags, groups, connection arguments) of a role function's keyword arguments."""
    flags = {k: kwargs.pop(k) for k in _ROLE_ARGS if k in kwargs}
    return flags, kwargs.pop("groups", None), kwargs


def _role_create(name: str, typ: str, **kwargs: Any) -> bool:
    flags, groups, conn = _role_args(kwargs)
    if user_exists(name, **conn):
        log.info("%s '%s' already exists", typ.capitalize(), name)
        return False
    stmts = [f"CREATE ROLE {ident(name)} {pgsql.role_options(name, typ, **flags)}".rstrip()]
    stmts += [f"GRANT {ident(g)} TO {ident(name)}" for g in pgsql.group_list(groups)]
    return _run(_conn(**conn), ";\n".join(stmts) + ";", transaction=True)


def _role_update(name: str, typ: str, **kwargs: Any) -> bool:
    flags, groups, conn = _role_args(kwargs)
    current = role_get(name, **conn)
    if not current:
        log.info("%s '%s' could not be found", typ.capitalize(), name)
        return False
    options = pgsql.role_options(name, "role", current=current, **flags)
    stmts = [f"ALTER ROLE {ident(name)} {options}"] if options else []
    stmts += [f"GRANT {ident(g)} TO {ident(name)}" for g in pgsql.group_list(groups) if g not in current["groups"]]
    if not stmts:
        return True
    return _run(_conn(**conn), ";\n".join(stmts) + ";", transaction=True)


def _role_remove(name: str, **conn: Any) -> bool:
    if not user_exists(name, **conn):
        log.info("User '%s' does not exist", name)
        return False
    _run(_conn(**conn), f"DROP ROLE {ident(name)}")
    if user_exists(name, **conn):
        log.info("Failed to delete user '%s'.", name)
        return False
    return True


def user_create(username: str, **kwargs: Any) -> bool:
    """Create a role that can log in (unless ``login=False``); False when it exists already or failed.

    Role arguments: createdb, createroles, inherit, login, connlimit, encrypted, superuser,
    replication, rolepassword, valid_until, groups (a list or comma-separated); the rest are
    connection arguments.
    """
    return _role_create(username, "user", **kwargs)


def user_update(username: str, **kwargs: Any) -> bool:
    """``ALTER ROLE`` with the role arguments given (see :func:`user_create`); grant the missing groups."""
    return _role_update(username, "user", **kwargs)


def user_remove(username: str, **conn: Any) -> bool:
    return _role_remove(username, **conn)


def group_create(groupname: str, **kwargs: Any) -> bool:
    """Create a role that cannot log in (unless ``login=True``); the arguments of :func:`user_create`."""
    return _role_create(groupname, "group", **kwargs)


def group_update(groupname: str, **kwargs: Any) -> bool:
    return _role_update(groupname, "group", **kwargs)


def group_remove(groupname: str, **conn: Any) -> bool:
    return _role_remove(groupname, **conn)
