"""Shared by the database state modules (``postgres_*``, ``mysql_*``): a private
sibling they import (the loader gives it the importing module's dunders).

Salt refuses a keyword argument a state function does not take ("'x' is an
invalid keyword argument for 'postgres_user.present'"), and aborts the whole
run with it; briny fails that one state with Salt's words instead
(``_state_args.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from briny.common.dunders import __context__


from ._state_args import _invalid_args

_PG_CONN = ("user", "maintenance_db", "db_user", "db_password", "db_host", "db_port")


def _pg_args(name: str, fun: str, kwargs: dict[str, Any], schema: bool = False, **extra: Any) -> tuple[dict, Any]:
    """(the connection arguments for the ``postgres`` functions, a failed result naming the others or None).

    The ``postgres_*`` states take ``user`` (the system user psql runs as), ``maintenance_db``,
    ``db_user``, ``db_password``, ``db_host``, ``db_port``; the schema functions want them
    under their own names (``user``, ``db_user`` ...), the others as ``runas``, ``user`` ...
    """
    conn = {k: kwargs.pop(k) for k in _PG_CONN if k in kwargs}
    if schema:
        conn.pop("maintenance_db", None)
        db = {k: conn.get(k) for k in ("db_user", "db_password", "db_host", "db_port", "user")}
    else:
        db = {
            "maintenance_db": conn.get("maintenance_db"),
            "runas": conn.get("user"),
            "host": conn.get("db_host"),
            "user": conn.get("db_user"),
            "port": conn.get("db_port"),
            "password": conn.get("db_password"),
        }
    return db, _invalid_args(name, fun, kwargs, **extra)


def _mysql_error() -> Any:
    """The error the mysql execution module left for this state (taken once), as Salt's states read it."""
    return __context__.pop("mysql.error", None)
