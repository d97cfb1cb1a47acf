"""The ``group`` state module: local groups present or absent.

Runs wherever states run (``briny-call``, the minion); the work goes through
the ``group`` execution module (groupadd/groupmod/groupdel/gpasswd).

Results follow Salt 3007 (checked against the reference): a new group reports
``New group x created`` with ``group.info`` as changes; an existing one lists
what it changes in the comment (``The following group attributes are set to
be changed:`` then ``key: value`` lines) with changes ``{"Final": "All
changes applied successfully"}``; test mode gives the same comment with
result None. ``members`` replaces the member list; ``addusers`` /
``delusers`` edit it and may not be combined with ``members``.

Differences from Salt, on purpose: a gid that is not a number fails the state
with ``Invalid gid: x`` (Salt reports it as an odd pending change).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __context__


def _as_list(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple, set)):
        return [str(v) for v in value]
    return [str(value)]


def _show(value: Any) -> str:
    """Salt prints a set as Python does; sorted here so the comment is stable."""
    if isinstance(value, set):
        return "{" + ", ".join(repr(v) for v in sorted(value)) + "}" if value else "set()"
    return str(value)


def _needed(
    name: str, gid: int | None, addusers: list[str] | None, delusers: list[str] | None, members: list[str] | None
) -> dict[str, Any] | None:
    """What must change (Salt's keys and order); None when the group is missing."""
    have = _salt("group.info")(name)
    if not have:
        return None
    want: dict[str, Any] = {}
    if gid is not None and have["gid"] != gid:
        want["gid"] = gid
    current = set(have["members"])
    if members is not None:
        if current.symmetric_difference(members):
            if members:
                want["members"] = members
            else:
                want["delusers"] = current
    if addusers:
        add = [u for u in addusers if u not in current]
        if add:
            want["addusers"] = add
    if delusers:
        drop = [u for u in delusers if u in current]
        if drop:
            want["delusers"] = drop
    return want


def present(
    name: str,
    gid: Any = None,
    system: bool = False,
    addusers: Any = None,
    delusers: Any = None,
    members: Any = None,
    non_unique: bool = False,
    local: bool = False,
) -> dict[str, Any]:
    """Ensure the group ``name`` exists with this gid and these members."""
    ret: dict[str, Any] = {
        "name": name,
        "changes": {},
        "result": True,
        "comment": f"Group {name} is present and up to date",
    }
    addusers, delusers, members = _as_list(addusers), _as_list(delusers), _as_list(members)
    if members is not None and (addusers is not None or delusers is not None):
        ret.update(
            result=None,
            comment='Error: Conflicting options "members" with "addusers" and/or "delusers" can not be used together. ',
        )
        return ret
    if addusers and delusers and not set(addusers).isdisjoint(delusers):
        ret.update(result=None, comment="Error. Same user(s) can not be added and deleted simultaneously")
        return ret
    gid_num: int | None = None
    if gid is not None and gid is not False and gid != "":
        try:
            gid_num = int(gid)
        except (TypeError, ValueError):
            ret.update(result=False, comment=f"Invalid gid: {gid}")
            return ret

    want = _needed(name, gid_num, addusers, delusers, members)
    if want:
        ret["comment"] = "The following group attributes are set to be changed:\n" + "".join(
            f"{key}: {_show(val)}\n" for key, val in want.items()
        )
        if _testing():
            ret["result"] = None
            return ret
        try:
            for key, val in want.items():
                if key == "gid":
                    _salt("group.chgid")(name, gid_num, non_unique=non_unique)
                elif key == "addusers":
                    for user in val:
                        _salt("group.adduser")(name, user)
                elif key == "delusers":
                    for user in sorted(val):
                        _salt("group.deluser")(name, user)
                elif key == "members":
                    _salt("group.members")(name, ",".join(members or []))
        except CommandExecutionError as exc:
            ret["comment"] += f"{exc}\n"
        left = _needed(name, gid_num, addusers, delusers, members)
        if left:
            ret.update(result=False, changes={"Failed": left})
            ret["comment"] += "Some changes could not be applied"
        else:
            ret["changes"] = {"Final": "All changes applied successfully"}
        return ret
    if want is not None:
        return ret

    if _testing():
        ret.update(result=None, comment=f"Group {name} set to be added")
        return ret
    if gid_num is not None and not non_unique:
        taken = next((g["name"] for g in _salt("group.getent")() if g["gid"] == gid_num), None)
        if taken is not None:
            ret.update(
                result=False, comment=f"Group {name} is not present but gid {gid_num} is already taken by group {taken}"
            )
            return ret
    __context__.pop("group.error", None)
    if not _salt("group.add")(name, gid=gid_num, system=system, non_unique=non_unique):
        reason = __context__.pop("group.error", None)
        ret.update(result=False, comment=f"Failed to create new group {name}" + (f": {reason}" if reason else ""))
        return ret
    initial = members if members else addusers
    if initial:
        _salt("group.members")(name, ",".join(initial))
    ret["comment"] = f"New group {name} created"
    ret["changes"] = _salt("group.info")(name)
    left = _needed(name, gid_num, addusers, delusers, members)
    if left:
        ret.update(
            result=False,
            changes={"Failed": left},
            comment=f"Group {name} has been created but, some changes could not be applied",
        )
    return ret


def absent(name: str, local: bool = False) -> dict[str, Any]:
    """Ensure the group ``name`` does not exist."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if not _salt("group.info")(name):
        ret["comment"] = "Group not present"
        return ret
    if _testing():
        ret.update(result=None, comment=f"Group {name} is set for removal")
        return ret
    if _salt("group.delete")(name):
        ret.update(changes={name: ""}, comment=f"Removed group {name}")
    else:
        ret.update(result=False, comment=f"Failed to remove group {name}")
    return ret
