"""The ``postgres_database`` state module: PostgreSQL databases present or absent.

Works through the ``postgres`` execution module (``psql``). Arguments,
comments and changes are Salt 3007's. ``present`` creates the database with
tablespace, encoding, lc_collate, lc_ctype, owner and template; on an existing
database it changes the owner (``owner_recurse``: of everything in it too)
and the tablespace, and fails with ``Database x has wrong parameters which
couldn't be changed on fly.`` when the encoding or locale differ. Comments:
``Database x is already present``, ``The database x has been created``
(``{x: Present}``), ``Parameters for database x have been changed``
(``{x: Parameters changed}``), ``Database x is set to be created`` / ``exists,
but parameters need to be changed`` in test mode; ``absent``: ``Database x
has been removed`` (``{x: Absent}``), ``... is not present, so it cannot be
removed``. Connection: user (runas), maintenance_db, db_user, db_password,
db_host, db_port.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._db_state_args import _pg_args
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def __virtual__() -> Any:
    if "postgres.user_exists" not in __salt__:
        return (False, "Unable to load postgres module.  Make sure `postgres.bins_dir` is set.")
    return True


def present(
    name: str,
    tablespace: Any = None,
    encoding: Any = None,
    lc_collate: Any = None,
    lc_ctype: Any = None,
    owner: Any = None,
    owner_recurse: bool = False,
    template: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the database exists with these parameters."""
    db_args, bad = _pg_args(name, "postgres_database.present", kwargs)
    if bad:
        return bad
    ret: dict[str, Any] = {
        "name": name,
        "changes": {},
        "result": True,
        "comment": f"Database {name} is already present",
    }
    dbs = _salt("postgres.db_list")(**db_args)
    cur = dbs.get(name, {})
    fixed_differ = name in dbs and (
        (encoding and str(cur.get("Encoding", "")).lower() != str(encoding).lower())
        or (lc_collate and cur.get("Collate") != lc_collate)
        or (lc_ctype and cur.get("Ctype") != lc_ctype)
    )
    movable_differ = name in dbs and (
        (tablespace and cur.get("Tablespace") != tablespace) or (owner and cur.get("Owner") != owner)
    )
    if name in dbs and not fixed_differ and not movable_differ:
        return ret
    if fixed_differ:
        ret["comment"] = f"Database {name} has wrong parameters which couldn't be changed on fly."
        ret["result"] = False
        return ret
    if _testing():
        ret["result"] = None
        if name not in dbs:
            ret["comment"] = f"Database {name} is set to be created"
        else:
            ret["comment"] = f"Database {name} exists, but parameters need to be changed"
        return ret
    if name not in dbs:
        if _salt("postgres.db_create")(
            name,
            tablespace=tablespace,
            encoding=encoding,
            lc_collate=lc_collate,
            lc_ctype=lc_ctype,
            owner=owner,
            template=template,
            **db_args,
        ):
            ret["comment"] = f"The database {name} has been created"
            ret["changes"][name] = "Present"
        else:
            ret["comment"] = f"Failed to create database {name}"
            ret["result"] = False
    elif _salt("postgres.db_alter")(name, tablespace=tablespace, owner=owner, owner_recurse=owner_recurse, **db_args):
        ret["comment"] = f"Parameters for database {name} have been changed"
        ret["changes"][name] = "Parameters changed"
    else:
        ret["comment"] = f"Failed to change parameters for database {name}"
        ret["result"] = False
    return ret


def absent(
    name: str,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the database does not exist (its sessions are closed first)."""
    db_args, bad = _pg_args(name, "postgres_database.absent", kwargs)
    if bad:
        return bad
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if not _salt("postgres.db_exists")(name, **db_args):
        ret["comment"] = f"Database {name} is not present, so it cannot be removed"
        return ret
    if _testing():
        ret["result"] = None
        ret["comment"] = f"Database {name} is set to be removed"
        return ret
    if _salt("postgres.db_remove")(name, **db_args):
        ret["comment"] = f"Database {name} has been removed"
        ret["changes"][name] = "Absent"
    else:
        ret["result"] = False
        ret["comment"] = f"Database {name} failed to be removed"
    return ret
