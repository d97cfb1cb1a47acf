"""The ``postgres_group`` state module: PostgreSQL roles that do not log in, present or absent.

Salt 3007's twin of ``postgres_user`` (read its docstring): the same
arguments but ``valid_until`` and ``default_password``, the same comments
with "Group"/"group" for "User"/"user", and roles created NOLOGIN unless
``login: True``. Both run ``states/_postgres_role.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._db_state_args import _pg_args
from ._postgres_role import _role_absent, _role_present

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def __virtual__() -> Any:
    if "postgres.user_exists" not in __salt__:
        return (False, "Unable to load postgres module.  Make sure `postgres.bins_dir` is set.")
    return True


def present(
    name: str,
    createdb: Any = None,
    createroles: Any = None,
    encrypted: Any = None,
    superuser: Any = None,
    replication: Any = None,
    inherit: Any = None,
    login: Any = None,
    password: Any = None,
    refresh_password: Any = None,
    groups: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the role ``name`` exists with these attributes."""
    db_args, bad = _pg_args(name, "postgres_group.present", kwargs)
    if bad:
        return bad
    flags = {
        "createdb": createdb,
        "createroles": createroles,
        "superuser": superuser,
        "replication": replication,
        "inherit": inherit,
        "login": login,
    }
    return _role_present(
        "group",
        name,
        flags,
        password,
        refresh_password,
        encrypted,
        groups,
        db_args,
    )


def absent(
    name: str,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the role ``name`` does not exist."""
    db_args, bad = _pg_args(name, "postgres_group.absent", kwargs)
    if bad:
        return bad
    return _role_absent("group", name, db_args)
