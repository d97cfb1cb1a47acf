"""Execution module ``user``: local accounts through the shadow-utils tools.

Runs on the managed host (``briny-call``, the minion). Reads come from the
passwd and group databases (:mod:`pwd`, :mod:`grp`, so NSS sources count);
writes go through ``useradd``, ``usermod`` and ``userdel`` run by
``__salt__["cmd.run_all"]`` with an argument list (no shell) and a time
limit. Functions and return values are Salt 3007's ``useradd`` module's:

- ``user.info`` -> ``{gid, groups, home, name, passwd, shell, uid, fullname,
  roomnumber, workphone, homephone, other}`` or ``{}``; ``groups`` is every
  group the user belongs to, the primary one included, sorted;
- ``user.add`` / ``user.delete`` / ``user.ch*`` -> True or False (a failing
  command is logged with its stderr; the reason of the last failure is kept
  in ``__context__["user.error"]`` for the state to report).
"""

from __future__ import annotations

import grp
import logging
import os
import pwd
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError

from briny.minion.host.shadowtools import run_tool

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __salt__


log = logging.getLogger(__name__)

__virtualname__ = "user"
_GECOS_KEYS = ("fullname", "roomnumber", "workphone", "homephone", "other")


def __virtual__() -> Any:
    if os.name != "posix":
        return False, "the user module needs a POSIX host"
    return __virtualname__


def _run(cmd: list[str], stdin: str | None = None) -> bool:
    """Run a shadow-utils command; True when it exited 0."""
    return run_tool(__salt__, cmd, stdin, context=__context__, error_key="user.error")


def _str(value: Any) -> str:
    return str(value)


def _pw(name: Any) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(str(name))
    except (KeyError, TypeError, ValueError):
        return None


def _gecos(raw: str) -> dict[str, str]:
    parts = raw.split(",", 4)
    parts += [""] * (5 - len(parts))
    return dict(zip(_GECOS_KEYS, parts))


def _format(pw: pwd.struct_passwd) -> dict[str, Any]:
    info: dict[str, Any] = {
        "gid": pw.pw_gid,
        "groups": list_groups(pw.pw_name),
        "home": pw.pw_dir,
        "name": pw.pw_name,
        "passwd": pw.pw_passwd,
        "shell": pw.pw_shell,
        "uid": pw.pw_uid,
    }
    info.update(_gecos(pw.pw_gecos))
    return info


def info(name: str, root: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """The account ``name`` as a dict, or ``{}`` when there is none."""
    pw = _pw(name)
    return _format(pw) if pw is not None else {}


def getent(refresh: bool = False, root: str | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    """Every account, as :func:`info` describes them."""
    return [_format(pw) for pw in pwd.getpwall()]


def list_users(root: str | None = None, **kwargs: Any) -> list[str]:
    return sorted(pw.pw_name for pw in pwd.getpwall())


def list_groups(name: str, **kwargs: Any) -> list[str]:
    """Names of every group ``name`` is in (its primary group included), sorted."""
    pw = _pw(name)
    if pw is None:
        return []
    try:
        gids = os.getgrouplist(pw.pw_name, pw.pw_gid)
    except OSError:
        gids = [pw.pw_gid] + [g.gr_gid for g in grp.getgrall() if pw.pw_name in g.gr_mem]
    names = set()
    for gid in gids:
        try:
            names.add(grp.getgrgid(gid).gr_name)
        except KeyError:
            continue
    return sorted(names)


def primary_group(name: str, **kwargs: Any) -> str:
    pw = _pw(name)
    if pw is None:
        return ""
    try:
        return grp.getgrgid(pw.pw_gid).gr_name
    except KeyError:
        return str(pw.pw_gid)


def _gecos_string(values: dict[str, Any]) -> str:
    fields = ["" if values.get(k) is None else _str(values[k]) for k in _GECOS_KEYS]
    return ",".join(fields).rstrip(",")


def add(
    name: str,
    uid: Any = None,
    gid: Any = None,
    groups: Any = None,
    home: str | None = None,
    shell: str | None = None,
    unique: bool = True,
    system: bool = False,
    fullname: Any = "",
    roomnumber: Any = "",
    workphone: Any = "",
    homephone: Any = "",
    other: Any = "",
    createhome: bool = True,
    loginclass: Any = None,
    nologinit: bool = False,
    root: str | None = None,
    usergroup: Any = None,
    local: bool = False,
    **kwargs: Any,
) -> bool:
    """Create the account ``name``; True on success."""
    cmd = ["useradd"]
    if shell:
        cmd += ["-s", _str(shell)]
    if uid not in (None, ""):
        cmd += ["-u", _str(uid)]
    if gid not in (None, ""):
        cmd += ["-g", _str(gid)]
    elif usergroup:
        cmd.append("-U")
    if usergroup is False:
        cmd.append("-N")
    cmd.append("-m" if createhome else "-M")
    if nologinit:
        cmd.append("-l")
    if home is not None:
        cmd += ["-d", _str(home)]
    if not unique:
        cmd.append("-o")
    if system:
        cmd.append("-r")
    gecos = _gecos_string(
        {"fullname": fullname, "roomnumber": roomnumber, "workphone": workphone, "homephone": homephone, "other": other}
    )
    if gecos:
        cmd += ["-c", gecos]
    cmd.append(_str(name))
    if not _run(cmd):
        return False
    if groups:
        if isinstance(groups, str):
            groups = groups.split(",")
        return chgroups(name, groups)
    return True


def delete(
    name: str, remove: bool = False, force: bool = False, root: str | None = None, local: bool = False, **kwargs: Any
) -> bool:
    """Remove the account; ``remove`` also deletes its home and mail spool."""
    cmd = ["userdel"]
    if remove:
        cmd.append("-r")
    if force:
        cmd.append("-f")
    cmd.append(_str(name))
    if _run(cmd):
        return True
    # userdel -r exits 12 when the home or mail spool is already gone but the user was removed
    return remove and _pw(name) is None


def _mod(name: str, *opts: str) -> bool:
    if _pw(name) is None:
        raise CommandExecutionError(f"User '{name}' does not exist")
    return _run(["usermod", *opts, _str(name)])


def _chattr(name: str, key: str, value: Any, *opts: str) -> bool:
    before = info(name)
    if not before:
        raise CommandExecutionError(f"User '{name}' does not exist")
    if before[key] == value:
        return True
    _mod(name, *opts)
    return info(name).get(key) == value


def chuid(name: str, uid: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chattr(name, "uid", int(uid), "-u", _str(uid))


def chgid(name: str, gid: Any, root: str | None = None, **kwargs: Any) -> bool:
    pw = _pw(name)
    if pw is None:
        raise CommandExecutionError(f"User '{name}' does not exist")
    _mod(name, "-g", _str(gid))
    after = _pw(name)
    wanted = __salt__["file.group_to_gid"](gid)
    return after is not None and after.pw_gid == wanted


def chshell(name: str, shell: str, root: str | None = None, **kwargs: Any) -> bool:
    return _chattr(name, "shell", shell, "-s", _str(shell))


def chhome(name: str, home: str, persist: bool = False, root: str | None = None, **kwargs: Any) -> bool:
    opts = ["-d", _str(home)] + (["-m"] if persist else [])
    return _chattr(name, "home", home, *opts)


def chgroups(name: str, groups: Any, append: bool = False, root: str | None = None, **kwargs: Any) -> bool:
    """Set the supplementary groups of ``name`` (add to them when ``append``)."""
    if isinstance(groups, str):
        groups = [g for g in groups.split(",") if g]
    groups = [_str(g) for g in (groups or [])]
    if not append and sorted(set(groups)) == sorted(set(list_groups(name)) - {primary_group(name)}):
        return True
    if append and not groups:
        return True
    opts = (["-a"] if append else []) + ["-G", ",".join(groups)]
    return _mod(name, *opts)


def _chgecos(name: str, key: str, value: Any) -> bool:
    value = "" if value is None else _str(value)
    current = info(name)
    if not current:
        raise CommandExecutionError(f"User '{name}' does not exist")
    if current[key] == value:
        return True
    current[key] = value
    _mod(name, "-c", _gecos_string(current))
    return info(name).get(key) == value


def chfullname(name: str, fullname: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chgecos(name, "fullname", fullname)


def chroomnumber(name: str, roomnumber: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chgecos(name, "roomnumber", roomnumber)


def chworkphone(name: str, workphone: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chgecos(name, "workphone", workphone)


def chhomephone(name: str, homephone: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chgecos(name, "homephone", homephone)


def chother(name: str, other: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chgecos(name, "other", other)


def rename(name: str, new_name: str, root: str | None = None, **kwargs: Any) -> bool:
    if _pw(new_name) is not None:
        raise CommandExecutionError(f"User '{new_name}' already exists")
    _mod(name, "-l", _str(new_name))
    return _pw(new_name) is not None
