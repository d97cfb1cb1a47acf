"""The ``postgres_schema`` state module: schemas in a PostgreSQL database, present or absent.

Works through the ``postgres`` execution module (``psql``). As in Salt 3007
the first argument is ``dbname`` (then ``name``), the result carries
``dbname``, and the connection arguments are ``user`` (runas), ``db_user``,
``db_password``, ``db_host``, ``db_port``. Comments: ``Schema x is already
present in database d`` / ``Schema x already exists in database d``,
``Schema x has been created in database d`` (``{x: Present}``), ``Schema x is
set to be created in database d.`` in test mode, ``Failed to create schema x
in database d``; absent: ``Schema x has been removed from database d``
(``{x: Absent}``), ``Schema x is not present in database d, so it cannot be
removed``, ``Schema x failed to be removed`` (it still holds objects).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._db_state_args import _pg_args
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def __virtual__() -> Any:
    if "postgres.schema_exists" not in __salt__:
        return (False, "Unable to load postgres module.  Make sure `postgres.bins_dir` is set.")
    return True


def present(
    dbname: str,
    name: str,
    owner: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the schema exists in database ``dbname`` (created with ``owner``)."""
    db_args, bad = _pg_args(name, "postgres_schema.present", kwargs, schema=True, dbname=dbname)
    if bad:
        return bad
    ret: dict[str, Any] = {
        "dbname": dbname,
        "name": name,
        "changes": {},
        "result": True,
        "comment": f"Schema {name} is already present in database {dbname}",
    }
    if _salt("postgres.schema_get")(dbname, name, **db_args) is not None:
        ret["comment"] = f"Schema {name} already exists in database {dbname}"
        return ret
    if _testing():
        ret["result"] = None
        ret["comment"] = f"Schema {name} is set to be created in database {dbname}."
        return ret
    if _salt("postgres.schema_create")(dbname, name, owner=owner, **db_args):
        ret["comment"] = f"Schema {name} has been created in database {dbname}"
        ret["changes"][name] = "Present"
    else:
        ret["comment"] = f"Failed to create schema {name} in database {dbname}"
        ret["result"] = False
    return ret


def absent(
    dbname: str,
    name: str,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the schema is not in database ``dbname`` (an empty schema only: DROP SCHEMA restricts)."""
    db_args, bad = _pg_args(name, "postgres_schema.absent", kwargs, schema=True, dbname=dbname)
    if bad:
        return bad
    ret: dict[str, Any] = {"name": name, "dbname": dbname, "changes": {}, "result": True, "comment": ""}
    if not _salt("postgres.schema_exists")(dbname, name, **db_args):
        ret["comment"] = f"Schema {name} is not present in database {dbname}, so it cannot be removed"
        return ret
    if _testing():
        ret["result"] = None
        ret["comment"] = f"Schema {name} is set to be removed from database {dbname}"
        return ret
    if _salt("postgres.schema_remove")(dbname, name, **db_args):
        ret["comment"] = f"Schema {name} has been removed from database {dbname}"
        ret["changes"][name] = "Absent"
    else:
        ret["result"] = False
        ret["comment"] = f"Schema {name} failed to be removed"
    return ret
