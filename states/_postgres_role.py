"""Shared by ``postgres_user`` and ``postgres_group`` (a private sibling both import): a
role present or absent, as Salt 3007's two state modules do it (they differ
in the word "User"/"Group" and in the execution functions they call).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


_ROLE_FLAGS = (
    ("createdb", "can create databases"),
    ("inherit", "inherits privileges"),
    ("login", "can login"),
    ("createroles", "can create roles"),
    ("replication", "replication"),
    ("superuser", "superuser"),
)


def _expiry(valid_until: Any, db_args: dict[str, Any]) -> Any:
    """``valid_until`` as the server reads it (a timestamp to the second), None when it cannot."""
    rows = __salt__["postgres.psql_query"](
        "SELECT {}::timestamp(0) AS dt".format("'" + str(valid_until).replace("'", "''") + "'"), **db_args
    )
    try:
        return datetime.datetime.strptime(rows[0]["dt"], "%Y-%m-%d %H:%M:%S")
    except (IndexError, KeyError, ValueError):
        return None


def _role_present(kind: str, name: str, flags: dict[str, Any], password: Any, refresh_password: Any,
                  encrypted: Any, groups: Any, db_args: dict[str, Any], valid_until: Any = None,
                  default_password: Any = None) -> dict[str, Any]:  # fmt: skip
    """``kind`` is "user" or "group"; ``flags`` the role attributes (None: leave alone)."""
    word = kind.capitalize()
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": f"{word} {name} is already present"}
    if encrypted is None:
        encrypted = "md5"
    current = __salt__["postgres.role_get"](name, return_password=not refresh_password, **db_args)
    mode = "create" if current is None else "update"
    if mode == "create" and password is None:
        password = default_password
    if password is not None:
        if (
            mode == "update"
            and not refresh_password
            and __salt__["postgres.verify_password"](name, password, current.get("password"), encrypted)
        ):
            password = None
        elif encrypted not in (True, False, "md5", "scram-sha-256"):
            # Salt raises (a traceback in the comment); the state fails with the same words
            ret.update(result=False, comment=f"Unknown password algorithm: {encrypted}")
            return ret
        else:
            password = __salt__["postgres.encrypt_password"](name, password, encrypted)
    update: dict[str, Any] = {}
    if mode == "update":
        for arg, attr in _ROLE_FLAGS:
            if flags.get(arg) is not None and current[attr] != flags[arg]:
                update[arg] = flags[arg]
        if password is not None:
            update["password"] = True
        if valid_until is not None and _expiry(valid_until, db_args) != current["expiry time"]:
            update["valid_until"] = valid_until
        if groups is not None:
            wanted = groups.split(",") if isinstance(groups, str) else groups
            if isinstance(wanted, list):
                missing = [g for g in wanted if g not in current.get("groups", [])]
                if missing:
                    update["groups"] = missing
    if mode == "update" and not update:
        return ret
    if _testing():
        if update:
            ret["changes"][name] = update
        ret["result"] = None
        ret["comment"] = f"{word} {name} is set to be {mode}d"
        return ret
    args = dict(flags, encrypted=encrypted, rolepassword=password, groups=groups, **db_args)
    if kind == "user":
        args["valid_until"] = valid_until
    if __salt__[f"postgres.{kind}_{mode}"](name, **args):
        ret["comment"] = f"The {kind} {name} has been {mode}d"
        ret["changes"][name] = update or "Present"
    else:
        ret["comment"] = f"Failed to {mode} {kind} {name}"
        ret["result"] = False
    return ret


def _role_absent(kind: str, name: str, db_args: dict[str, Any]) -> dict[str, Any]:
    word = kind.capitalize()
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if not __salt__["postgres.user_exists"](name, **db_args):
        ret["comment"] = f"{word} {name} is not present, so it cannot be removed"
        return ret
    if _testing():
        ret["result"] = None
        ret["comment"] = f"{word} {name} is set to be removed"
        return ret
    if __salt__[f"postgres.{kind}_remove"](name, **db_args):
        ret["comment"] = f"{word} {name} has been removed"
        ret["changes"][name] = "Absent"
    else:
        ret["result"] = False
        ret["comment"] = f"{word} {name} failed to be removed"
    return ret
