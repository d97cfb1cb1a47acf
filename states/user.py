"""The ``user`` state module: local accounts present or absent.

Runs wherever states run (``briny-call``, the minion). All the work goes
through execution modules: ``user.*`` (useradd/usermod/userdel), ``group.info``,
``shadow.*`` (password hashes and ageing) and ``file.*`` for the home folder.

Results follow Salt 3007 (checked against the reference with live, test and
second runs): a new account reports ``New user x created`` with the account's
``user.info`` as changes (``home: ""`` when ``createhome`` is off, the hash as
``XXX-REDACTED-XXX``); an update reports ``Updated user x`` with every field
that differs between before and after; an account that matches reports
``User x is present and up to date``; test mode lists the attributes that
would change. Changing a uid or gid needs ``allow_uid_change`` /
``allow_gid_change``, as in Salt.

Differences from Salt, on purpose: when ``useradd`` or ``userdel`` fails, its
reason is appended to Salt's comment (``Failed to create new user x: useradd:
invalid user ID 'abc'``); a comma is refused in every GECOS field (Salt
checks only three of them); a uid or gid written as a quoted number compares
as that number.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __salt__


_REDACTED = "XXX-REDACTED-XXX"
_GECOS = ("fullname", "roomnumber", "workphone", "homephone", "other")
_SHADOW_SETTERS = (
    ("date", "set_date", "lstchg"),
    ("mindays", "set_mindays", "min"),
    ("maxdays", "set_maxdays", "max"),
    ("inactdays", "set_inactdays", "inact"),
    ("warndays", "set_warndays", "warn"),
    ("expire", "set_expire", "expire"),
)
_HASH_ALGOS = {"1": "md5", "2a": "blowfish", "5": "sha256", "6": "sha512"}


def _has(fun: str) -> bool:
    return fun in __salt__


def _context() -> dict[str, Any]:
    return __context__


def _as_list(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple, set)):
        return [str(v) for v in value]
    return [str(value)]


def _number(value: Any) -> Any:
    """A quoted number as an int; anything else unchanged."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return value


def _group_name(gid: Any) -> Any:
    return _salt("file.gid_to_group")(gid)


def _group_changes(current: set[str], wanted: set[str], remove: bool) -> bool:
    """Do the supplementary groups need changing? Groups sharing a gid count as one."""
    if current == wanted or (not remove and wanted <= current):
        return False
    diff = (wanted ^ current) if remove else (wanted - current)
    gids = {g: (_salt("group.info")(g) or {}).get("gid") for g in current | wanted}
    for name in diff:
        if not any(other != name and gids[other] is not None and gids[other] == gids[name] for other in gids):
            return True
    return False


def _needed(name: str, a: dict[str, Any], allow_uid: bool, allow_gid: bool) -> dict[str, Any] | None:
    """What must change for ``name`` to match ``a`` (in Salt's order); None when the user is missing.

    Raises CommandExecutionError listing refused uid/gid changes.
    """
    have = _salt("user.info")(name)
    if not have:
        return None
    shadow = _salt("shadow.info")(name) if _has("shadow.info") else None
    want: dict[str, Any] = {}
    uid, gid = a["uid"], a["gid"]
    if uid not in (None, "") and have["uid"] != uid:
        want["uid"] = uid
    if gid is not None and have["gid"] not in (gid, _salt("file.group_to_gid")(gid)):
        want["gid"] = gid

    current = set(have["groups"])
    wanted = set(a["groups"] or []) | set(a["optional_groups"] or [])
    remove = a["remove_groups"]
    if not remove or (a["groups"] is None and not a["optional_groups"]):
        wanted |= current
    new_primary = _group_name(gid if gid is not None else have["gid"])
    old_primary = _group_name(have["gid"])
    current.discard(new_primary)
    wanted.discard(new_primary)
    if old_primary != new_primary:
        current.discard(old_primary)
    if name not in wanted:
        current.discard(name)
    if _group_changes(current, wanted, remove) and (wanted or remove):
        want["groups"] = sorted(wanted)

    home = a["home"]
    if home and have["home"] != home:
        want["home"] = home
    if a["createhome"]:
        target = home or have["home"]
        if target is not None and not os.path.isdir(target):
            want["homeDoesNotExist"] = target
    if a["shell"] and have["shell"] != a["shell"]:
        want["shell"] = a["shell"]

    if shadow is not None and _has("shadow.default_hash"):
        password, empty = a["password"], a["empty_password"]
        if password and not empty:
            locked_new = shadow["passwd"] == _salt("shadow.default_hash")()
            if (locked_new or a["enforce_password"]) and shadow["passwd"] != password:
                want["passwd"] = password
        if empty and shadow["passwd"] != "":
            want["empty_password"] = True
        for key, _setter, field in _SHADOW_SETTERS:
            value = a[key]
            if value is not None and (key != "expire" or value) and shadow[field] != value:
                want[key] = value
        lock = a["password_lock"]
        is_locked = str(shadow["passwd"]).startswith("!")
        if (lock and not is_locked) or (lock is False and is_locked):
            want["password_lock"] = lock

    for key in _GECOS:
        value = a[key]
        if value is not None and (key == "fullname" or _has(f"user.ch{key}")) and have[key] != value:
            want[key] = value

    errors = []
    if not allow_uid and "uid" in want:
        errors.append(
            f"Changing uid ({have['uid']} -> {uid}) not permitted, set allow_uid_change to "
            "True to force this change. Note that this will not change file ownership."
        )
    if not allow_gid and "gid" in want:
        errors.append(
            f"Changing gid ({have['gid']} -> {gid}) not permitted, set allow_gid_change to "
            "True to force this change. Note that this will not change file ownership."
        )
    if errors:
        raise CommandExecutionError(
            "Encountered error checking for needed changes. Additional info follows:\n\n"
            + "\n".join(f"- {e}" for e in errors)
        )
    return want


def _hash(name: str, password: str) -> str:
    """Hash a clear-text password, reusing the salt and algorithm of the current hash."""
    current = str((_salt("shadow.info")(name) or {}).get("passwd") or "")
    parts = current.split("$")
    if len(parts) == 4 and parts[1] in _HASH_ALGOS:
        return str(_salt("shadow.gen_password")(password, crypt_salt=parts[2], algorithm=_HASH_ALGOS[parts[1]]))
    return str(_salt("shadow.gen_password")(password))


def _apply(name: str, want: dict[str, Any], a: dict[str, Any], before: dict[str, Any]) -> None:
    """Make the changes ``_needed`` found, each through its execution function."""
    want = dict(want)
    if "passwd" in want:
        want.pop("passwd")
        _salt("shadow.set_password")(name, a["password"])
    if want.pop("empty_password", False) is True:
        _salt("shadow.del_password")(name)
    if "password_lock" in want:
        _salt("shadow.lock_password" if want.pop("password_lock") else "shadow.unlock_password")(name)
    if "date" in want:
        _salt("shadow.set_date")(name, want.pop("date"))
    home_done = False
    if "home" in want:
        target = want.pop("home")
        if "homeDoesNotExist" not in want:
            _salt("user.chhome")(name, target, persist=a["persist_home"])
            home_done = True
    if "homeDoesNotExist" in want:
        target = want.pop("homeDoesNotExist")
        if not home_done:
            _salt("user.chhome")(name, target, persist=a["persist_home"])
        if not os.path.isdir(target):
            _salt("file.mkdir")(target, before["uid"], before["gid"], "0755")
    for key, setter, _field in _SHADOW_SETTERS[1:]:
        if key in want:
            _salt(f"shadow.{setter}")(name, want.pop(key))
    groups = want.pop("groups", None)
    for key in list(want):
        if _has(f"user.ch{key}"):
            _salt(f"user.ch{key}")(name, want.pop(key))
    if groups is not None:
        _salt("user.chgroups")(name, groups, not a["remove_groups"])


def _create(name: str, a: dict[str, Any], groups: list[str] | None, ret: dict[str, Any]) -> dict[str, Any]:
    params = {
        k: a[k]
        for k in (
            "uid",
            "gid",
            "home",
            "shell",
            "unique",
            "system",
            "fullname",
            "roomnumber",
            "workphone",
            "homephone",
            "other",
            "createhome",
            "nologinit",
            "loginclass",
            "local",
            "usergroup",
        )
    }
    _context().pop("user.error", None)
    try:
        result = _salt("user.add")(name=name, groups=groups, **params)
    except CommandExecutionError as exc:
        result = f"Failed to create new user {name}: {exc}"
    if result is not True:
        ret["result"] = False
        if isinstance(result, str):
            ret["comment"] = result
        else:
            reason = _context().pop("user.error", None)
            ret["comment"] = f"Failed to create new user {name}" + (f": {reason}" if reason else "")
        return ret
    ret["comment"] = f"New user {name} created"
    ret["changes"] = _salt("user.info")(name)
    if not a["createhome"]:
        ret["changes"]["home"] = ""
    if not _has("shadow.info"):
        return ret
    password, empty = a["password"], a["empty_password"]
    checks: list[tuple[str, Any, str, str, str]] = []
    if password and not empty:
        _salt("shadow.set_password")(name, password)
        checks.append(
            (
                "passwd",
                password,
                "password",
                _REDACTED,
                f"User {name} created but failed to set password to {_REDACTED}",
            )
        )
    if empty and not password:
        _salt("shadow.del_password")(name)
        checks.append(("passwd", "", "password", "", f"User {name} created but failed to empty password"))
    words = {
        "date": "last change date",
        "mindays": "minimum days",
        "maxdays": "maximum days",
        "inactdays": "inactive days",
        "warndays": "warn days",
        "expire": "expire days",
    }
    for key, setter, field in _SHADOW_SETTERS:
        value = a[key]
        if (value is not None) if key == "date" else bool(value):
            _salt(f"shadow.{setter}")(name, value)
            checks.append((field, value, key, value, f"User {name} created but failed to set {words[key]} to {value}"))
    for field, value, key, shown, failure in checks:
        if str(_salt("shadow.info")(name).get(field)) != str(value):
            ret["comment"] = failure
            ret["result"] = False
        ret["changes"][key] = shown
    return ret


def present(
    name: str,
    uid: Any = None,
    gid: Any = None,
    usergroup: Any = None,
    groups: Any = None,
    optional_groups: Any = None,
    remove_groups: bool = True,
    home: str | None = None,
    createhome: bool = True,
    persist_home: bool = False,
    password: str | None = None,
    hash_password: bool = False,
    enforce_password: bool = True,
    empty_password: bool = False,
    shell: str | None = None,
    unique: bool = True,
    system: bool = False,
    fullname: Any = None,
    roomnumber: Any = None,
    workphone: Any = None,
    homephone: Any = None,
    other: Any = None,
    loginclass: Any = None,
    date: Any = None,
    mindays: Any = None,
    maxdays: Any = None,
    inactdays: Any = None,
    warndays: Any = None,
    expire: Any = None,
    win_homedrive: Any = None,  # the win_* arguments are for Windows hosts: taken and unused, as Salt
    win_profile: Any = None,
    win_logonscript: Any = None,
    win_description: Any = None,
    nologinit: bool = False,
    allow_uid_change: bool = False,
    allow_gid_change: bool = False,
    password_lock: Any = None,
    local: bool = False,
) -> dict[str, Any]:
    """Ensure the account ``name`` exists with these attributes."""
    ret: dict[str, Any] = {
        "name": name,
        "changes": {},
        "result": True,
        "comment": f"User {name} is present and up to date",
    }
    groups_l, optional_l = _as_list(groups), _as_list(optional_groups)
    if password is not None:
        password = str(password)
    if password and hash_password:
        password = _hash(name, password)
    a: dict[str, Any] = {
        "uid": _number(uid),
        "gid": _number(gid),
        "groups": groups_l,
        "optional_groups": None,
        "remove_groups": remove_groups,
        "home": home,
        "createhome": createhome,
        "persist_home": persist_home,
        "password": password,
        "enforce_password": enforce_password,
        "empty_password": empty_password,
        "shell": shell,
        "unique": unique,
        "system": system,
        "loginclass": loginclass,
        "date": date,
        "mindays": mindays,
        "maxdays": maxdays,
        "inactdays": inactdays,
        "warndays": warndays,
        "expire": expire,
        "nologinit": nologinit,
        "password_lock": password_lock,
        "local": local,
        "usergroup": usergroup,
    }
    for key, value in zip(_GECOS, (fullname, roomnumber, workphone, homephone, other)):
        a[key] = None if value is None else str(value)
        if a[key] is not None and "," in a[key]:
            ret.update(result=False, comment=f"Unsupported char ',' in {a[key]}")
            return ret

    missing = [g for g in (groups_l or []) if not _salt("group.info")(g)]
    if missing:
        if not _testing():
            ret.update(result=False, comment="The following group(s) are not present: " + ",".join(missing))
            return ret
        a["groups"] = [g for g in groups_l or [] if g not in missing]
    if optional_l:
        a["optional_groups"] = [g for g in optional_l if _salt("group.info")(g)]

    check = dict(a)
    if usergroup and _salt("file.group_to_gid")(name) != "":
        check["gid"] = name
    try:
        want = _needed(name, check, allow_uid_change, allow_gid_change)
    except CommandExecutionError as exc:
        ret.update(result=False, comment=str(exc))
        return ret

    if want is None:
        if _testing():
            ret["result"] = None
            ret["comment"] = f"User {name} set to be added"
            if missing:
                ret["comment"] += " (pending groups: {})".format(",".join(missing))
            return ret
        all_groups = list(a["groups"] or []) + list(a["optional_groups"] or [])
        return _create(name, a, all_groups or a["groups"], ret)

    if not want:
        return ret
    if _testing():
        lines = [f"{k}: {_REDACTED if k == 'passwd' else v}" for k, v in want.items()]
        if missing:
            lines.append("groups (pending creation): " + ",".join(missing))
        ret.update(
            result=None,
            comment="The following user attributes are set to be changed:\n" + "".join(line + "\n" for line in lines),
        )
        return ret

    shadow_before = _salt("shadow.info")(name) if _has("shadow.info") else {}
    before = _salt("user.info")(name)
    try:
        _apply(name, want, a, before)
    except CommandExecutionError as exc:
        ret.update(result=False, comment=f"Failed to update user {name}: {exc}")
        return ret
    after = _salt("user.info")(name)
    for key, value in after.items():
        if before.get(key) != value:
            ret["changes"][key] = value
    if shadow_before and shadow_before.get("passwd") != password:
        for key, value in _salt("shadow.info")(name).items():
            if shadow_before.get(key) != value:
                ret["changes"][key] = _REDACTED if key == "passwd" else value
    if ret["changes"]:
        ret["comment"] = f"Updated user {name}"
    left = _needed(name, a, True, True)
    if left:
        ret.update(result=False, comment=f"These values could not be changed: {left}")
    return ret


def absent(name: str, purge: bool = False, force: bool = False, local: bool = False) -> dict[str, Any]:
    """Ensure the account ``name`` does not exist (``purge`` removes its home too)."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    if not _salt("user.info")(name):
        ret["comment"] = f"User {name} is not present"
        return ret
    if _testing():
        ret.update(result=None, comment=f"User {name} set for removal")
        return ret
    groups_before = set(_salt("user.list_groups")(name))
    _context().pop("user.error", None)
    try:
        ok = _salt("user.delete")(name, purge, force)
    except CommandExecutionError as exc:
        ok, _context()["user.error"] = False, str(exc)
    if not ok:
        reason = _context().pop("user.error", None)
        ret.update(result=False, comment=f"Failed to remove user {name}" + (f": {reason}" if reason else ""))
        return ret
    for group in sorted(groups_before):
        if not _salt("group.info")(group):
            ret["changes"][f"{group} group"] = "removed"
    ret["changes"][name] = "removed"
    ret["comment"] = f"Removed user {name}"
    return ret
