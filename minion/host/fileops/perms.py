"""Owners, groups and modes: lookups, normalisation and what would change.

Runs on the managed host, called by the ``file`` execution module. Changes
are reported in Salt's keys (``user``, ``group``, ``mode``) with the values
the state asked for, as Salt's ``file.check_perms`` does.
"""

from __future__ import annotations

import grp
import logging
import os
import pwd
import re
import stat
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

log = logging.getLogger(__name__)
_MODE_RE = re.compile(r"^[0-7]{1,4}$")


def user_to_uid(user: Any) -> int | str:
    """The uid of ``user`` (a name or a number), or ``""`` when there is none."""
    if user is None or user == "":
        return ""
    if isinstance(user, int) and not isinstance(user, bool):
        return user
    try:
        return pwd.getpwnam(str(user)).pw_uid
    except KeyError:
        return int(user) if str(user).isdigit() else ""


def group_to_gid(group: Any) -> int | str:
    """The gid of ``group`` (a name or a number), or ``""`` when there is none."""
    if group is None or group == "":
        return ""
    if isinstance(group, int) and not isinstance(group, bool):
        return group
    try:
        return grp.getgrnam(str(group)).gr_gid
    except KeyError:
        return int(group) if str(group).isdigit() else ""


def uid_to_user(uid: str | int) -> str | int:
    try:
        return pwd.getpwuid(int(uid)).pw_name
    except (KeyError, ValueError, TypeError):
        return uid


def gid_to_group(gid: str | int) -> str | int:
    try:
        return grp.getgrgid(int(gid)).gr_name
    except (KeyError, ValueError, TypeError):
        return gid


def primary_group(user: Any) -> str | None:
    """The name of ``user``'s login group, or None."""
    uid = user_to_uid(user)
    if uid == "":
        return None
    try:
        return str(gid_to_group(pwd.getpwuid(int(uid)).pw_gid))
    except KeyError:
        return None


def normalize_mode(mode: Any) -> str | None:
    """``644``, ``"644"``, ``"0644"``, ``0o644`` → ``"0644"``; None stays None.

    Raises SaltInvocationError for anything that is not an octal mode.
    """
    if mode is None or mode == "":
        return None
    if isinstance(mode, bool):
        raise SaltInvocationError(f"Invalid mode {mode!r}")
    text = str(mode).strip()
    if text.lower().startswith("0o"):
        text = text[2:]
    if not _MODE_RE.match(text.lstrip("0") or "0"):
        raise SaltInvocationError(f"Invalid mode {mode}: a mode is up to four octal digits, like 0644")
    return (text.lstrip("0") or "0").zfill(4)


def dir_mode_for(file_mode: str | None) -> str | None:
    """A directory mode for a file mode: execute wherever read is allowed (0640 → 0750)."""
    if file_mode is None:
        return None
    bits = int(file_mode, 8)
    for r, x in ((0o400, 0o100), (0o040, 0o010), (0o004, 0o001)):
        if bits & r:
            bits |= x
    return f"{bits:04o}"


def missing_owner(user: Any, group: Any) -> str:
    """Salt's comment for owners that do not exist on this host ("" when all do)."""
    comment = ""
    if user not in (None, "") and user_to_uid(user) == "":
        comment += f"User {user} is not available "
    if group not in (None, "") and group_to_gid(group) == "":
        comment += f"Group {group} is not available"
    return comment


def mode_of(path: str, follow_symlinks: bool = True) -> str:
    st = os.stat(path) if follow_symlinks else os.lstat(path)
    return f"{stat.S_IMODE(st.st_mode):04o}"


def perm_changes(
    path: str, user: Any = None, group: Any = None, mode: str | None = None, follow_symlinks: bool = True
) -> dict[str, Any]:
    """What ``user``/``group``/``mode`` would change on ``path``, in Salt's keys."""
    st = os.stat(path) if follow_symlinks else os.lstat(path)
    changes: dict[str, Any] = {}
    if user not in (None, "") and user_to_uid(user) != st.st_uid:
        changes["user"] = user
    if group not in (None, "") and group_to_gid(group) != st.st_gid:
        changes["group"] = group
    if mode is not None and not stat.S_ISLNK(st.st_mode) and mode != f"{stat.S_IMODE(st.st_mode):04o}":
        changes["mode"] = mode
    return changes


def apply_perms(path: str, changes: dict[str, Any], follow_symlinks: bool = True) -> None:
    """Apply the ``user``/``group``/``mode`` part of ``changes`` to ``path``."""
    if "user" in changes or "group" in changes:
        uid = user_to_uid(changes["user"]) if "user" in changes else -1
        gid = group_to_gid(changes["group"]) if "group" in changes else -1
        if uid == "" or gid == "":
            raise CommandExecutionError(missing_owner(changes.get("user"), changes.get("group")).strip())
        try:
            os.chown(path, int(uid), int(gid), follow_symlinks=follow_symlinks)
        except OSError as exc:
            raise CommandExecutionError(f"Failed to change ownership of {path}: {exc.strerror}") from exc
    if "mode" in changes:
        try:
            os.chmod(path, int(changes["mode"], 8))
        except OSError as exc:
            raise CommandExecutionError(f"Failed to change mode to {changes['mode']}: {exc.strerror}") from exc
