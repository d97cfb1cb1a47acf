"""The ``postgres_tablespace`` state module: PostgreSQL tablespaces present or absent.

Works through the ``postgres`` execution module (``psql``). Arguments,
comments and changes are Salt 3007's: ``present`` creates the tablespace in
``directory`` (which must exist, empty, owned by the server's user) with
``options`` (``{seq_page_cost: 1.1}``) and ``owner``; an existing one gets
its owner and options changed (changes ``{x: {owner: o}}``, ``{x: {options:
{k: v}}}``), and one in another directory fails (PostgreSQL cannot move it).
Comments: ``Tablespace x is already present``, ``The tablespace x has been
created`` (``{x: Present}``), ``Tablespace x is set to be created`` in test
mode; absent: ``Tablespace x has been removed`` (``{x: Absent}``),
``Tablespace x is not present, so it cannot be removed``; a DROP that fails
(the tablespace is in use) fails the state with ``Tablespace x failed to be
removed`` (Salt reports it as not present, with result True). Connection: user
(runas), maintenance_db, db_user, db_password, db_host, db_port.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._db_state_args import _pg_args
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def __virtual__() -> Any:
    if "postgres.tablespace_exists" not in __salt__:
        return (False, "Unable to load postgres module.  Make sure `postgres.bins_dir` is set.")
    return True


def present(
    name: str,
    directory: str,
    options: Any = None,
    owner: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the tablespace exists in ``directory`` with this owner and these options."""
    db_args, bad = _pg_args(name, "postgres_tablespace.present", kwargs)
    if bad:
        return bad
    ret: dict[str, Any] = {
        "name": name,
        "changes": {},
        "result": True,
        "comment": f"Tablespace {name} is already present",
    }
    spaces = _salt("postgres.tablespace_list")(**db_args)
    if name not in spaces:
        if _testing():
            ret["result"] = None
            ret["comment"] = f"Tablespace {name} is set to be created"
            return ret
        if _salt("postgres.tablespace_create")(name, directory, options, owner, **db_args):
            ret["comment"] = f"The tablespace {name} has been created"
            ret["changes"][name] = "Present"
        else:
            ret["comment"] = f"Failed to create tablespace {name}"
            ret["result"] = False
        return ret
    cur = spaces[name]
    if cur["Location"] != directory and not _testing():
        ret["comment"] = (
            f"Tablespace {name} is not at the right location. This is\n"
            "            unfixable without dropping and recreating the tablespace."
        )
        ret["result"] = False
        return ret
    if owner and cur["Owner"] != owner:
        if _testing():
            ret["result"] = None
            ret["comment"] = f"Tablespace {name} owner to be altered"
        elif _salt("postgres.tablespace_alter")(name, new_owner=owner, **db_args):
            ret["comment"] = f"Tablespace {name} owner changed"
            ret["changes"][name] = {"owner": owner}
    for key, val in dict(options or {}).items():
        if f"{key}={val}" in (cur.get("Opts") or ""):
            continue
        if _testing():
            ret["result"] = None
            ret["comment"] = f"Tablespace {name} options to be\n                        altered"
            break
        if _salt("postgres.tablespace_alter")(name, set_option={key: val}, **db_args):
            ret["comment"] = f"Tablespace {name} opts changed"
            ret["changes"].setdefault(name, {}).setdefault("options", {})[key] = val
    return ret


def absent(
    name: str,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the tablespace does not exist (an empty one: PostgreSQL refuses to drop the others)."""
    db_args, bad = _pg_args(name, "postgres_tablespace.absent", kwargs)
    if bad:
        return bad
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if _salt("postgres.tablespace_exists")(name, **db_args):
        if _testing():
            ret["result"] = None
            ret["comment"] = f"Tablespace {name} is set to be removed"
            return ret
        if _salt("postgres.tablespace_remove")(name, **db_args):
            ret["comment"] = f"Tablespace {name} has been removed"
            ret["changes"][name] = "Absent"
        else:  # Salt says "not present" with result True here; a failed DROP fails the state
            ret["result"] = False
            ret["comment"] = f"Tablespace {name} failed to be removed"
        return ret
    ret["comment"] = f"Tablespace {name} is not present, so it cannot be removed"
    return ret
