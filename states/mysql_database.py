"""The ``mysql_database`` state module: MySQL/MariaDB databases present or absent.

Works through the ``mysql`` execution module (the ``mariadb``/``mysql``
client); every other keyword argument is a connection argument
(``connection_host``, ``connection_port``, ``connection_user``,
``connection_pass``, ``connection_unix_socket``, ``connection_default_file``
..., else the ``mysql.*`` config keys). Arguments, comments and changes are
Salt 3007's: ``The database x has been created`` (``{x: Present}``),
``Database x is already present``, ``Database x is not present and needs to
be created`` in test mode; a different character set or collation is
altered (changes ``{character_set: {before, now}}``, ``{collate: ...}``) with
``Database character set a != b needs to be updated``; ``absent``:
``Database x has been removed`` (``{x: Absent}``), ``... is present and
needs to be removed`` in test mode, ``... is not present, so it cannot be
removed``. A server error fails the state with its text, ``MySQL Error
1045: Access denied for user ...``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._db_state_args import _mysql_error
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def __virtual__() -> Any:
    if "mysql.db_exists" in __salt__:
        return True
    return (False, "mysql module could not be loaded")


def present(name: str, character_set: Any = None, collate: Any = None, **connection_args: Any) -> dict[str, Any]:
    """Ensure the database exists with this character set and collation."""
    ret: dict[str, Any] = {
        "name": name,
        "changes": {},
        "result": True,
        "comment": f"Database {name} is already present",
    }
    existing = _salt("mysql.db_get")(name, **connection_args)
    if existing:
        cur_cs, cur_co = str(existing.get("character_set")), str(existing.get("collate"))
        alter = False
        if character_set and character_set != cur_cs:
            alter = True
            ret["comment"] = f"Database character set {character_set} != {cur_cs} needs to be updated"
            if _testing():
                ret["result"] = None
        if collate and collate != cur_co:
            alter = True
            ret["comment"] += f"\nDatabase collate {collate} != {cur_co} needs to be updated"
            if _testing():
                ret["result"] = None
                return ret
        if alter:
            if _testing():
                ret["comment"] += f"\nDatabase {name} is going to be updated"
            else:
                _salt("mysql.alter_db")(name, character_set=character_set, collate=collate, **connection_args)
        current = _salt("mysql.db_get")(name, **connection_args) or {}
        for key in ("collate", "character_set"):
            if existing.get(key) != current.get(key):
                ret["changes"][key] = {"before": existing.get(key), "now": current.get(key)}
        return ret
    err = _mysql_error()
    if err is not None:
        ret.update(comment=err, result=False)
        return ret
    if _testing():
        ret["result"] = None
        ret["comment"] = f"Database {name} is not present and needs to be created"
        return ret
    if _salt("mysql.db_create")(name, character_set=character_set, collate=collate, **connection_args):
        ret["comment"] = f"The database {name} has been created"
        ret["changes"][name] = "Present"
    else:
        ret["comment"] = f"Failed to create database {name}"
        err = _mysql_error()
        if err is not None:
            ret["comment"] += f" ({err})"
        ret["result"] = False
    return ret


def absent(name: str, **connection_args: Any) -> dict[str, Any]:
    """Ensure the database does not exist."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if _salt("mysql.db_exists")(name, **connection_args):
        if _testing():
            ret["result"] = None
            ret["comment"] = f"Database {name} is present and needs to be removed"
            return ret
        if _salt("mysql.db_remove")(name, **connection_args):
            ret["comment"] = f"Database {name} has been removed"
            ret["changes"][name] = "Absent"
            return ret
        err = _mysql_error()
        if err is not None:
            ret.update(comment=f"Unable to remove database {name} ({err})", result=False)
            return ret
    else:
        err = _mysql_error()
        if err is not None:
            ret.update(comment=err, result=False)
            return ret
    ret["comment"] = f"Database {name} is not present, so it cannot be removed"
    return ret
