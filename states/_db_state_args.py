"""Shared by the database state modules (``postgres_*``, ``mysql_*``): a part
(``__parts__``) the loader runs in each module's namespace.

Salt refuses a keyword argument a state function does not take ("'x' is an
invalid keyword argument for 'postgres_user.present'"), and aborts the whole
run with it; briny fails that one state with Salt's words instead.
"""

# ruff: noqa: F821 - runs in the namespace of the state module listing it in __parts__
from __future__ import annotations

from typing import Any

# keywords the state system itself may hand a state function that takes **kwargs
_STATE_KEYWORDS = frozenset({"name_order", "names", "listen", "listen_in", "use", "use_in"})


def _invalid_args(name: str, fun: str, kwargs: dict[str, Any], **extra: Any) -> dict[str, Any] | None:
    """A failed result naming the arguments ``fun`` does not take, or None when there are none."""
    bad = [k for k in kwargs if not str(k).startswith("__") and k not in _STATE_KEYWORDS]
    if not bad:
        return None
    if len(bad) == 1:
        comment = f"'{bad[0]}' is an invalid keyword argument for '{fun}'"
    else:
        comment = (
            f"{', '.join(repr(str(k)) for k in bad[:-1])} and '{bad[-1]}' are invalid keyword arguments for '{fun}'"
        )
    return {"name": name, **extra, "changes": {}, "result": False, "comment": comment}


def _db_args(  # the postgres_* states
    user: Any, maintenance_db: Any, db_user: Any, db_password: Any, db_host: Any, db_port: Any
) -> dict:
    return {
        "maintenance_db": maintenance_db,
        "runas": user,
        "host": db_host,
        "user": db_user,
        "port": db_port,
        "password": db_password,
    }


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _mysql_error() -> Any:
    """The error the mysql execution module left for this state (taken once), as Salt's states read it."""
    return __context__.pop("mysql.error", None)


def _testing() -> bool:
    return bool(__opts__.get("test"))
