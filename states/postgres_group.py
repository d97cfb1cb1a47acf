"""The ``postgres_group`` state module: PostgreSQL roles (groups) present or absent.

Runs wherever states run and works through the ``postgres`` execution
module (``psql``). Arguments, comments and changes are Salt 3007's:
``Group x is already present``, ``The group x has been created`` (changes
``{x: Present}``), ``... has been updated`` (changes: the attributes that
changed, ``password: True`` for a new password), ``Group x is set to be
created/updated`` in test mode, ``Failed to create group x``; absent:
``Group x has been removed`` (``{x: Absent}``), ``... is not present, so it
cannot be removed``. Role attributes: createdb, createroles, inherit, login,
replication, superuser, password (encrypted: md5 by default, scram-sha-256,
or False), refresh_password, groups; no valid_until or default_password, as in Salt. Connection: user
(runas), maintenance_db, db_user, db_password, db_host, db_port. An argument
Salt's function does not take fails the state with Salt's words.
"""

from __future__ import annotations

from typing import Any

__parts__ = ("_db_state_args", "_postgres_role")


def __virtual__() -> Any:
    if "postgres.user_exists" not in __salt__:  # type: ignore[name-defined]  # noqa: F821
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
    user: Any = None,
    maintenance_db: Any = None,
    db_password: Any = None,
    db_host: Any = None,
    db_port: Any = None,
    db_user: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the role ``name`` exists with these attributes."""
    bad = _invalid_args(name, "postgres_group.present", kwargs)  # noqa: F821
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
    db_args = _db_args(user, maintenance_db, db_user, db_password, db_host, db_port)  # noqa: F821
    return _role_present(  # noqa: F821
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
    user: Any = None,
    maintenance_db: Any = None,
    db_password: Any = None,
    db_host: Any = None,
    db_port: Any = None,
    db_user: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the role ``name`` does not exist."""
    bad = _invalid_args(name, "postgres_group.absent", kwargs)  # noqa: F821
    if bad:
        return bad
    db_args = _db_args(user, maintenance_db, db_user, db_password, db_host, db_port)  # noqa: F821
    return _role_absent("group", name, db_args)  # noqa: F821
