"""The ``postgres_extension`` state module: PostgreSQL extensions installed or removed.

Works through the ``postgres`` execution module (``psql``). Arguments,
comments and changes are Salt 3007's: ``present`` installs the extension
(``schema``, ``ext_version``, ``from_version``, ``if_not_exists``), moves a
relocatable one to ``schema`` and upgrades an older one to ``ext_version``:
``Extension x is already present``, ``The extension x has been installed``
(``{x: Installed}``) / ``upgraded`` (``{x: Upgraded}``), ``Extension x is set
to be installed/upgraded`` in test mode, ``Failed to install extension x``.
``absent`` drops it (``cascade`` by default, ``restrict``, ``if_exists``):
``Extension x has been removed`` (``{x: Absent}``), ``Extension x is not
present, so it cannot be removed``. Connection: user (runas),
maintenance_db (the database the extension lives in), db_user, db_password,
db_host, db_port.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._db_state_args import _pg_args
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def __virtual__() -> Any:
    if "postgres.create_extension" not in __salt__:
        return (False, "Unable to load postgres module.  Make sure `postgres.bins_dir` is set.")
    return True


def present(
    name: str,
    if_not_exists: Any = None,
    schema: Any = None,
    ext_version: Any = None,
    from_version: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the extension is installed (in ``schema``, at least at ``ext_version``)."""
    db_args, bad = _pg_args(name, "postgres_extension.present", kwargs)
    if bad:
        return bad
    ret: dict[str, Any] = {
        "name": name,
        "changes": {},
        "result": True,
        "comment": f"Extension {name} is already present",
    }
    meta = _salt("postgres.create_metadata")(name, schema=schema, ext_version=ext_version, **db_args)
    if "EXTENSION NOT INSTALLED" in meta:
        mode = "install"
    elif "EXTENSION TO MOVE" in meta or "EXTENSION TO UPGRADE" in meta:
        mode = "upgrade"
    else:
        return ret
    if _testing():
        ret["result"] = None
        ret["comment"] = f"Extension {name} is set to be {mode}ed".replace("eed", "ed")
        return ret
    if _salt("postgres.create_extension")(
        name=name,
        if_not_exists=if_not_exists,
        schema=schema,
        ext_version=ext_version,
        from_version=from_version,
        **db_args,
    ):
        suffix = "d" if mode.endswith("e") else "ed"
        ret["comment"] = f"The extension {name} has been {mode}{suffix}"
        ret["changes"][name] = f"{mode.capitalize()}{suffix}"
    else:
        ret["comment"] = f"Failed to {mode} extension {name}"
        ret["result"] = False
    return ret


def absent(
    name: str,
    if_exists: Any = None,
    restrict: Any = None,
    cascade: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the extension is not installed."""
    db_args, bad = _pg_args(name, "postgres_extension.absent", kwargs)
    if bad:
        return bad
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if not _salt("postgres.is_installed_extension")(name, **db_args):
        ret["comment"] = f"Extension {name} is not present, so it cannot be removed"
        return ret
    if _testing():
        ret["result"] = None
        ret["comment"] = f"Extension {name} is set to be removed"
        return ret
    if _salt("postgres.drop_extension")(name, if_exists=if_exists, restrict=restrict, cascade=cascade, **db_args):
        ret["comment"] = f"Extension {name} has been removed"
        ret["changes"][name] = "Absent"
    else:
        ret["result"] = False
        ret["comment"] = f"Extension {name} failed to be removed"
    return ret
