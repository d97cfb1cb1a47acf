"""Part of the ``postgres`` execution module (a private sibling ``postgres.py``
imports): extensions, schemas, languages, privileges and data directories."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.minion.host import pgsql
from briny.minion.host.pgsql import ident, literal

from ._postgres_client import (
    _conn,
    _find_pg_binary,
    _private_file,
    _rows,
    _run,
    psql_query,
)

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

_EXTENSION_NOT_INSTALLED = "EXTENSION NOT INSTALLED"
_EXTENSION_INSTALLED = "EXTENSION INSTALLED"
_EXTENSION_TO_UPGRADE = "EXTENSION TO UPGRADE"
_EXTENSION_TO_MOVE = "EXTENSION TO MOVE"


# ---------------------------------------------------------------- extensions


def available_extensions(
    **conn: Any,
) -> dict[str, dict[str, str]]:
    """``{name: {name, default_version, installed_version, comment}}`` of the extensions the server offers."""
    rows = psql_query("SELECT * FROM pg_available_extensions()", **conn)
    return {row["name"]: row for row in rows if "default_version" in row and "name" in row}


def installed_extensions(
    **conn: Any,
) -> dict[str, dict[str, str]]:
    """``{extname: pg_extension's columns + schema_name}`` of the extensions installed in ``maintenance_db``."""
    rows = psql_query(
        "SELECT a.*, b.nspname AS schema_name FROM pg_extension a, pg_namespace b WHERE a.extnamespace = b.oid",
        **conn,
    )
    return {row["extname"]: row for row in rows if "extversion" in row and "extname" in row}


def get_available_extension(name: str, *args: Any, **kwargs: Any) -> dict[str, str] | None:
    return available_extensions(*args, **kwargs).get(name)


def get_installed_extension(name: str, *args: Any, **kwargs: Any) -> dict[str, str] | None:
    return installed_extensions(*args, **kwargs).get(name)


def is_available_extension(name: str, *args: Any, **kwargs: Any) -> bool:
    return name.lower() in (n.lower() for n in available_extensions(*args, **kwargs))


def is_installed_extension(name: str, *args: Any, **kwargs: Any) -> bool:
    return bool(get_installed_extension(name, *args, **kwargs))


def _version_key(text: str) -> list[Any]:
    import re

    return [(0, int(p)) if p.isdigit() else (1, p) for p in re.findall(r"\d+|[a-zA-Z]+", str(text))]


def create_metadata(
    name: str,
    ext_version: Any = None,
    schema: Any = None,
    **conn: Any,
) -> list[str]:
    """Where the extension stands: not installed, or installed (and to upgrade, to move to ``schema``)."""
    ext = get_installed_extension(name, **conn)
    if not ext:
        return [_EXTENSION_NOT_INSTALLED]
    ret = [_EXTENSION_INSTALLED]
    if ext_version is not None and _version_key(ext.get("extversion", ext_version)) < _version_key(ext_version):
        ret.append(_EXTENSION_TO_UPGRADE)
    if schema is not None and ext.get("extrelocatable", "f") == "t" and ext.get("schema_name", schema) != schema:
        ret.append(_EXTENSION_TO_MOVE)
    return ret


def create_extension(
    name: str,
    if_not_exists: Any = None,
    schema: Any = None,
    ext_version: Any = None,
    from_version: Any = None,
    **conn: Any,
) -> bool:
    """Install the extension, or move/upgrade it; True when it ends up installed as asked."""
    meta = create_metadata(name, ext_version, schema, **conn)
    if is_available_extension(name, **conn):
        if _EXTENSION_NOT_INSTALLED in meta:
            sql = "CREATE EXTENSION " + ("IF NOT EXISTS " if if_not_exists is None or if_not_exists else "")
            sql += ident(name)
            with_parts = []
            if schema:
                with_parts.append(f"SCHEMA {ident(schema)}")
            if ext_version:
                with_parts.append(f"VERSION {literal(ext_version)}")
            if from_version:
                with_parts.append(f"FROM {literal(from_version)}")
            stmts = [sql + (" WITH " + " ".join(with_parts) if with_parts else "")]
        else:
            stmts = []
            if schema and _EXTENSION_TO_MOVE in meta:
                stmts.append(f"ALTER EXTENSION {ident(name)} SET SCHEMA {ident(schema)}")
            if ext_version and _EXTENSION_TO_UPGRADE in meta:
                stmts.append(f"ALTER EXTENSION {ident(name)} UPDATE TO {literal(ext_version)}")
        if stmts:
            _run(_conn(**conn), ";\n".join(stmts) + ";", transaction=True)
    meta = create_metadata(name, ext_version, schema, **conn)
    if meta != [_EXTENSION_INSTALLED]:
        log.info("Failed to create ext: %s", name)
        return False
    return True


def drop_extension(
    name: str,
    if_exists: Any = None,
    restrict: Any = None,
    cascade: Any = None,
    **conn: Any,
) -> bool:
    """``DROP EXTENSION`` (CASCADE unless ``cascade=False``); True when it is gone."""
    if is_installed_extension(name, **conn):
        sql = "DROP EXTENSION " + ("IF EXISTS " if if_exists else "") + ident(name)
        if cascade is None or cascade:
            sql += " CASCADE"
        if restrict:
            sql += " RESTRICT"
        _run(_conn(**conn), sql)
    if is_installed_extension(name, **conn):
        log.info("Failed to drop ext: %s", name)
        return False
    return True


# ---------------------------------------------------------------- schemas (Salt's db_* argument names)


def schema_list(
    dbname: str,
    user: Any = None,
    db_user: Any = None,
    db_password: Any = None,
    db_host: Any = None,
    db_port: Any = None,
    **kwargs: Any,
) -> dict[str, dict[str, str]]:
    """``{schema: {owner, acl}}`` in database ``dbname``."""
    rows = psql_query(
        'SELECT n.nspname AS "name", n.nspacl AS "acl", r.rolname AS "owner" '
        "FROM pg_namespace n LEFT JOIN pg_roles r ON r.oid = n.nspowner",
        user=db_user,
        host=db_host,
        port=db_port,
        maintenance_db=dbname,
        password=db_password,
        runas=user,
    )
    return {row["name"]: {"owner": row["owner"], "acl": row["acl"]} for row in rows}


def schema_get(dbname: str, name: str, user: Any = None, **kwargs: Any) -> dict[str, str] | None:
    return schema_list(dbname, user, **kwargs).get(name)


def schema_exists(dbname: str, name: str, user: Any = None, **kwargs: Any) -> bool:
    return bool(schema_get(dbname, name, user, **kwargs))


def schema_create(
    dbname: str,
    name: str,
    owner: Any = None,
    user: Any = None,
    db_user: Any = None,
    db_password: Any = None,
    db_host: Any = None,
    db_port: Any = None,
    **kwargs: Any,
) -> bool:
    """``CREATE SCHEMA name [AUTHORIZATION owner]`` in ``dbname``; False when it exists already."""
    db = {"db_user": db_user, "db_password": db_password, "db_host": db_host, "db_port": db_port}
    if schema_exists(dbname, name, user, **db):
        log.info("'%s' already exists in '%s'", name, dbname)
        return False
    sql = f"CREATE SCHEMA {ident(name)}" + (f" AUTHORIZATION {ident(owner)}" if owner is not None else "")
    return _run(_conn(db_user, db_host, db_port, dbname, db_password, user), sql)


def schema_remove(
    dbname: str,
    name: str,
    user: Any = None,
    db_user: Any = None,
    db_password: Any = None,
    db_host: Any = None,
    db_port: Any = None,
    **kwargs: Any,
) -> bool:
    """``DROP SCHEMA`` (RESTRICT: a schema holding objects stays, and the call returns False)."""
    db = {"db_user": db_user, "db_password": db_password, "db_host": db_host, "db_port": db_port}
    if not schema_exists(dbname, name, user, **db):
        log.info("Schema '%s' does not exist in '%s'", name, dbname)
        return False
    _run(_conn(db_user, db_host, db_port, dbname, db_password, user), f"DROP SCHEMA {ident(name)}")
    if schema_exists(dbname, name, user, **db):
        log.info("Failed to delete schema '%s'.", name)
        return False
    return True


# ---------------------------------------------------------------- languages


def language_list(
    maintenance_db: str,
    **conn: Any,
) -> dict[str, str]:
    rows = psql_query('SELECT lanname AS "Name" FROM pg_language', maintenance_db=maintenance_db, **conn)
    return {row["Name"]: row["Name"] for row in rows}


def language_exists(name: str, maintenance_db: str, *args: Any, **kwargs: Any) -> bool:
    return name in language_list(maintenance_db, *args, **kwargs)


def language_create(
    name: str,
    maintenance_db: str,
    **conn: Any,
) -> bool:
    if language_exists(name, maintenance_db, **conn):
        log.info("Language %s already exists in %s", name, maintenance_db)
        return False
    return _run(_conn(maintenance_db=maintenance_db, **conn), f"CREATE LANGUAGE {ident(name)}")


def language_remove(
    name: str,
    maintenance_db: str,
    **conn: Any,
) -> bool:
    if not language_exists(name, maintenance_db, **conn):
        log.info("Language %s does not exist in %s", name, maintenance_db)
        return False
    return _run(_conn(maintenance_db=maintenance_db, **conn), f"DROP LANGUAGE {ident(name)}")


# ---------------------------------------------------------------- privileges

# object type -> (ACL column query, owner query); {s} is the schema (prepend), {n} the name, as literals
_OBJECT_QUERIES = {
    "table": (
        "SELECT relacl AS acl, pg_get_userbyid(relowner) AS owner, current_setting('server_version_num') AS ver"
        " FROM pg_class c JOIN pg_namespace n "
        "ON n.oid = c.relnamespace WHERE nspname = {s} AND relname = {n} AND relkind IN ('r', 'v', 'm', 'p', 'f')"
    ),
    "sequence": (
        "SELECT relacl AS acl, pg_get_userbyid(relowner) AS owner, current_setting('server_version_num') AS ver"
        " FROM pg_class c JOIN pg_namespace n "
        "ON n.oid = c.relnamespace WHERE nspname = {s} AND relname = {n} AND relkind = 'S'"
    ),
    "schema": "SELECT nspacl AS acl, pg_get_userbyid(nspowner) AS owner, current_setting('server_version_num') AS ver"
    " FROM pg_namespace WHERE nspname = {n}",
    "function": (
        "SELECT proacl AS acl, pg_get_userbyid(proowner) AS owner, current_setting('server_version_num') AS ver"
        " FROM pg_proc p JOIN pg_namespace n "
        "ON n.oid = p.pronamespace WHERE nspname = {s} AND p.oid::regprocedure::text = {n}"
    ),
    "tablespace": "SELECT spcacl AS acl, pg_get_userbyid(spcowner) AS owner, current_setting('server_version_num') AS ver"
    " FROM pg_tablespace WHERE spcname = {n}",
    "language": "SELECT lanacl AS acl, pg_get_userbyid(lanowner) AS owner, current_setting('server_version_num') AS ver"
    " FROM pg_language WHERE lanname = {n}",
    "database": "SELECT datacl AS acl, pg_get_userbyid(datdba) AS owner, current_setting('server_version_num') AS ver"
    " FROM pg_database WHERE datname = {n}",
}
_GROUP_MEMBERS = (
    "SELECT r.rolname AS rolname, m.admin_option AS admin_option FROM pg_auth_members m "
    "JOIN pg_roles r ON m.member = r.oid WHERE m.roleid = (SELECT oid FROM pg_roles WHERE rolname = {n})"
)


def _object_rows(name: str, object_type: str, prepend: str, conn: dict[str, Any]) -> list[dict[str, Any]]:
    object_type = object_type.lower()
    if object_type not in pgsql.OBJECT_TYPES:
        raise SaltInvocationError(f"Invalid object_type: {object_type} provided")
    query = _GROUP_MEMBERS if object_type == "group" else _OBJECT_QUERIES[object_type]
    return _rows(_conn(**conn), query.format(s=literal(prepend), n=literal(name))) or []


def privileges_list(
    name: str,
    object_type: str,
    prepend: str = "public",
    **conn: Any,
) -> dict[str, Any]:
    """``{role: {PRIVILEGE: grant_option}}`` on the object; for a group ``{member: admin_option}``."""
    rows = _object_rows(name, object_type, prepend, conn)
    if object_type.lower() == "group":
        return {row["rolname"]: row["admin_option"] == "t" for row in rows}
    ret: dict[str, Any] = {}
    for row in rows:
        ret.update(pgsql.parse_acl(row["acl"]))
    return ret


def has_privileges(
    name: str,
    object_name: str,
    object_type: str,
    privileges: Any = None,
    grant_option: Any = None,
    prepend: str = "public",
    **conn: Any,
) -> bool:
    """Whether role ``name`` holds ``privileges`` (``ALL``: every one the server knows for that type) on the
    object, with ``grant_option`` each of them grantable; its owner always does.

    Salt 3007 asks, with ``grant_option``, for every privilege of the type whatever was named, and counts
    MAINTAIN (PostgreSQL 17) in ALL on older servers: a table grant with a grant option, or ALL, is never
    found there, and the second run fails or grants again. briny checks what was asked.
    """
    object_type = str(object_type).lower()
    text, privs = pgsql.privilege_list(privileges)
    pgsql.check_privileges(object_type, privs, text)
    rows = _object_rows(object_name, object_type, prepend, conn)
    if object_type == "group":
        members = {row["rolname"]: row["admin_option"] == "t" for row in rows}
        return name in members and (members[name] if grant_option else True)
    if any(row["owner"] == name for row in rows):
        return True
    acl: dict[str, dict[str, bool]] = {}
    for row in rows:
        acl.update(pgsql.parse_acl(row["acl"]))
    held = acl.get(name)
    if held is None:
        return False
    ver = int(rows[0]["ver"] or 0) if rows else 0
    wanted = pgsql.all_privileges(object_type, ver) if "ALL" in privs else privs
    if grant_option:
        return all(held.get(p) is True for p in wanted)
    return set(wanted) <= set(held)


def privileges_grant(
    name: str,
    object_name: str,
    object_type: str,
    privileges: Any = None,
    grant_option: Any = None,
    prepend: str = "public",
    **conn: Any,
) -> bool:
    """GRANT the privileges (or, for a group, membership); False when held already or failed."""
    object_type = str(object_type).lower()
    text, privs = pgsql.privilege_list(privileges)
    pgsql.check_privileges(object_type, privs, text)
    if has_privileges(name, object_name, object_type, text, grant_option, prepend, **conn):
        log.info("The object: %s of type: %s already has privileges: %s set", object_name, object_type, text)
        return False
    sql = pgsql.grant_sql(name, object_name, object_type, privs, grant_option, prepend)
    return _run(_conn(**conn), sql)


def privileges_revoke(
    name: str,
    object_name: str,
    object_type: str,
    privileges: Any = None,
    prepend: str = "public",
    **conn: Any,
) -> bool:
    """REVOKE the privileges (or group membership); False when not held or failed."""
    object_type = str(object_type).lower()
    text, privs = pgsql.privilege_list(privileges)
    pgsql.check_privileges(object_type, privs, text)
    if not has_privileges(name, object_name, object_type, text, None, prepend, **conn):
        log.info("The object: %s of type: %s does not have privileges: %s set", object_name, object_type, text)
        return False
    return _run(_conn(**conn), pgsql.revoke_sql(name, object_name, object_type, privs, prepend))


# ---------------------------------------------------------------- data directories


def datadir_exists(name: str, **kwargs: Any) -> bool:
    """Whether ``name`` holds an initialised cluster (PG_VERSION and postgresql.conf)."""
    return os.path.isfile(os.path.join(name, "PG_VERSION")) and os.path.isfile(os.path.join(name, "postgresql.conf"))


def datadir_init(
    name: str,
    auth: str = "password",
    user: Any = None,
    password: Any = None,
    encoding: str = "UTF8",
    locale: Any = None,
    waldir: Any = None,
    checksums: bool = False,
    runas: Any = None,
    **kwargs: Any,
) -> bool:
    """``initdb`` a new cluster in ``name`` as ``runas`` (default ``postgres``); False when one exists."""
    if datadir_exists(name):
        log.info("%s already exists", name)
        return False
    initdb = _find_pg_binary("initdb")
    if not initdb:
        raise CommandExecutionError("initdb executable not found.")
    runas = runas or "postgres"
    cmd = [initdb, f"--pgdata={name}", f"--username={user or runas}", f"--auth={auth}", f"--encoding={encoding}"]
    if locale is not None:
        cmd.append(f"--locale={locale}")
    if waldir is not None:
        cmd += ["-X", str(waldir)]
    if checksums:
        cmd.append("--data-checksums")
    pwfile = None
    if password is not None:
        pwfile = _private_file(f"{password}\n", runas)
        cmd.append(f"--pwfile={pwfile}")
    try:
        ret = __salt__["cmd.run_all"](cmd, python_shell=False, runas=runas, clean_env=True, ignore_retcode=True)
    finally:
        if pwfile:
            os.remove(pwfile)
    if ret["retcode"] != 0:
        log.error("Error initialising the postgres data directory %s: %s", name, ret.get("stderr", "").strip())
    return ret["retcode"] == 0
