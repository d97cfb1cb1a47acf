"""The ``postgres_user`` state module: PostgreSQL roles (users) present or absent.

Runs wherever states run and works through the ``postgres`` execution
module (``psql``). Arguments, comments and changes are Salt 3007's:
``User x is already present``, ``The user x has been created`` (changes
``{x: Present}``), ``... has been updated`` (changes: the attributes that
changed, ``password: True`` for a new password), ``User x is set to be
created/updated`` in test mode, ``Failed to create user x``; absent:
``User x has been removed`` (``{x: Absent}``), ``... is not present, so it
cannot be removed``. Role attributes: createdb, createroles, inherit, login,
replication, superuser, password (encrypted: md5 by default, scram-sha-256,
or False), refresh_password, groups; valid_until, default_password (used only when creating). Connection: user
(runas), maintenance_db, db_user, db_password, db_host, db_port. An argument
Salt's function does not take fails the state with Salt's words.
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
    default_password: Any = None,
    refresh_password: Any = None,
    valid_until: Any = None,
    groups: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the role ``name`` exists with these attributes."""
    db_args, bad = _pg_args(name, "postgres_user.present", kwargs)
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
        "user",
        name,
        flags,
        password,
        refresh_password,
        encrypted,
        groups,
        db_args,
        valid_until=valid_until,
        default_password=default_password,
    )


def absent(
    name: str,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the role ``name`` does not exist."""
    db_args, bad = _pg_args(name, "postgres_user.absent", kwargs)
    if bad:
        return bad
    return _role_absent("user", name, db_args)
