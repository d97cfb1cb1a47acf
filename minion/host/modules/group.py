"""Execution module ``group``: local groups through the shadow-utils tools.

Runs on the managed host. Reads come from the group database (:mod:`grp`);
writes go through ``groupadd``, ``groupmod``, ``groupdel`` and ``gpasswd``
run by ``__salt__["cmd.run_all"]`` with an argument list and a time limit.
Functions and return values are Salt 3007's ``groupadd`` module's:
``group.info`` -> ``{name, passwd, gid, members}`` or ``{}``; changes
return True or False (a failing command is logged with its stderr).
"""

from __future__ import annotations

import grp
import logging
import os
from typing import TYPE_CHECKING, Any

from briny.minion.host.shadowtools import run_tool

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __salt__


log = logging.getLogger(__name__)

__virtualname__ = "group"


def __virtual__() -> Any:
    if os.name != "posix":
        return False, "the group module needs a POSIX host"
    return __virtualname__


def _run(cmd: list[str]) -> bool:
    """Run a shadow-utils command; True when it exited 0."""
    return run_tool(__salt__, cmd, context=__context__, error_key="group.error")


def _format(gr: grp.struct_group) -> dict[str, Any]:
    return {"name": gr.gr_name, "passwd": gr.gr_passwd, "gid": gr.gr_gid, "members": list(gr.gr_mem)}


def info(name: Any, root: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """The group ``name`` (a name, or a gid as a number) as a dict, or ``{}``."""
    try:
        if isinstance(name, int) and not isinstance(name, bool):
            return _format(grp.getgrgid(name))
        return _format(grp.getgrnam(str(name)))
    except (KeyError, TypeError, ValueError, OverflowError):
        return {}


def getent(refresh: bool = False, root: str | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    return [_format(g) for g in grp.getgrall()]


def list_groups(**kwargs: Any) -> list[str]:
    return sorted(g.gr_name for g in grp.getgrall())


def add(
    name: str,
    gid: Any = None,
    system: bool = False,
    root: str | None = None,
    non_unique: bool = False,
    local: bool = False,
    **kwargs: Any,
) -> bool:
    cmd = ["groupadd"]
    if gid not in (None, ""):
        cmd += ["-g", str(gid)]
        if non_unique:
            cmd.append("-o")
    if system:
        cmd.append("-r")
    cmd.append(str(name))
    return _run(cmd)


def delete(name: str, root: str | None = None, local: bool = False, **kwargs: Any) -> bool:
    return _run(["groupdel", str(name)])


def chgid(name: str, gid: Any, root: str | None = None, non_unique: bool = False, **kwargs: Any) -> bool:
    current = info(name)
    if not current:
        return False
    if str(current["gid"]) == str(gid):
        return True
    cmd = ["groupmod", "-g", str(gid)] + (["-o"] if non_unique else []) + [str(name)]
    _run(cmd)
    return str(info(name).get("gid")) == str(gid)


def adduser(name: str, username: str, root: str | None = None, **kwargs: Any) -> bool:
    """Add ``username`` to the members of ``name``; True on success."""
    return _run(["gpasswd", "-a", str(username), str(name)])


def deluser(name: str, username: str, root: str | None = None, **kwargs: Any) -> bool:
    """Remove ``username`` from the members of ``name``; True when it is not a member after."""
    current = info(name)
    if not current:
        return False
    if str(username) not in current["members"]:
        return True
    return _run(["gpasswd", "-d", str(username), str(name)])


def members(name: str, members_list: Any, root: str | None = None, **kwargs: Any) -> bool:
    """Replace the members of ``name`` with ``members_list`` (a list or a comma-separated string)."""
    if isinstance(members_list, (list, tuple)):
        members_list = ",".join(str(m) for m in members_list)
    return _run(["gpasswd", "-M", str(members_list or ""), str(name)])
