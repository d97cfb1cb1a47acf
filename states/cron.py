"""The ``cron`` state module: jobs and variables in users' crontabs.

Runs wherever states run; the crontab work goes through the ``cron``
execution module (``crontab -u USER -l`` / ``crontab -u USER -``), sources
of ``cron.file`` through ``cp.cache_file``.

Results follow Salt 3007 (checked against the reference, live, test and
second runs): a job is known by its identifier, which defaults to the
command, and is written under Salt's ``# SALT_CRON_IDENTIFIER:`` marker, so
tables written by Salt are managed seamlessly. Comments are Salt's: ``Cron x
added to u's crontab`` (changes ``{user: x}``), ``Cron x updated``, ``Cron x
already present``, ``Cron x removed from u's crontab``, ``Cron x already
absent``; in test mode ``is set to be added / updated / removed``. A
``crontab`` failure (an unknown user) fails the state with ``Cron x for user
u failed to commit with error`` and crontab's message. ``cron.file``
installs a whole crontab from a source and reports a unified diff.

Differences from Salt, on purpose: ``cron.file`` in test mode with nothing
to change says ``Crontab for user u is in the correct state`` (Salt names a
temporary file); ``template`` in ``cron.file`` needs a template renderer
among the execution modules (``file.apply_template_on_contents``) and fails
the state clearly without one; a variable set without a value is not
rewritten on every run.
"""

from __future__ import annotations

import difflib
import os
from typing import TYPE_CHECKING, Any
from ._access import _salt, _testing

if TYPE_CHECKING:
    from briny.common.dunders import __env__, __salt__


_NO_ID = "NO ID SET"
_FIELDS = ("minute", "hour", "daymonth", "month", "dayweek")


def _ret(name: str) -> dict[str, Any]:
    return {"name": name, "changes": {}, "result": True, "comment": ""}


def _matches(entry: dict[str, Any], cmd: str, identifier: Any) -> bool:
    if entry.get("identifier"):
        return str(entry["identifier"]) == (str(identifier) if identifier else _NO_ID)
    return entry.get("cmd") == cmd


def _differs(old: Any, new: Any) -> bool:
    if old == new or new is None:
        return False
    if new == "random":
        return old == "*"
    return True


def _status(
    user: str,
    cmd: str,
    identifier: Any,
    special: Any = None,
    comment: Any = None,
    commented: Any = None,
    times: dict[str, Any] | None = None,
) -> str:
    """``absent``, ``present`` or ``update`` for the job as the state asks for it."""
    tab = _salt("cron.list_tab")(user)
    identifier = None if identifier is None else str(identifier)
    commented = None if commented is None else commented is True
    times = {k: (None if v is None else str(v).lower()) for k, v in (times or {}).items()}
    for entry in tab["crons" if special is None else "special"]:
        if not _matches(entry, cmd, identifier):
            continue
        checks = [
            (entry.get("identifier"), identifier),
            (entry.get("cmd"), cmd),
            (entry.get("comment"), comment),
            (entry.get("commented"), commented),
        ]
        if special is None:
            checks += [(entry.get(f), times.get(f)) for f in _FIELDS]
        else:
            checks.append((entry.get("spec"), special))
        return "update" if any(_differs(old, new) for old, new in checks) else "present"
    return "absent"


def _outcome(ret: dict[str, Any], data: Any, what: str, name: str, user: str) -> dict[str, Any]:
    """``ret`` for what ``cron.set_job``/``set_special``/``set_env`` answered, in Salt's words."""
    if data == "present":
        ret["comment"] = f"{what} {name} already present"
    elif data == "new":
        ret.update(comment=f"{what} {name} added to {user}'s crontab", changes={user: name})
    elif data == "updated":
        ret.update(comment=f"{what} {name} updated", changes={user: name})
    else:
        ret.update(result=False, comment=f"{what} {name} for user {user} failed to commit with error \n{data}")
    return ret


def present(
    name: str,
    user: str = "root",
    minute: Any = "*",
    hour: Any = "*",
    daymonth: Any = "*",
    month: Any = "*",
    dayweek: Any = "*",
    comment: str | None = None,
    commented: bool = False,
    identifier: Any = False,
    special: str | None = None,
) -> dict[str, Any]:
    """Ensure the job ``name`` (a command) is in ``user``'s crontab at these times."""
    name = str(name).strip()
    if identifier is False:
        identifier = name
    ret = _ret(name)
    if _testing():
        times = dict(zip(_FIELDS, (minute, hour, daymonth, month, dayweek)))
        status = _status(user, name, identifier, special, comment, commented, times)
        ret["result"] = True if status == "present" else None
        ret["comment"] = {
            "absent": f"Cron {name} is set to be added",
            "present": f"Cron {name} already present",
            "update": f"Cron {name} is set to be updated",
        }[status]
        return ret
    if special is None:
        data = _salt("cron.set_job")(
            user=user,
            minute=minute,
            hour=hour,
            daymonth=daymonth,
            month=month,
            dayweek=dayweek,
            cmd=name,
            comment=comment,
            commented=commented,
            identifier=identifier,
        )
    else:
        data = _salt("cron.set_special")(
            user=user, special=special, cmd=name, comment=comment, commented=commented, identifier=identifier
        )
    return _outcome(ret, data, "Cron", name, user)


def absent(
    name: str, user: str = "root", identifier: Any = False, special: str | None = None, **kwargs: Any
) -> dict[str, Any]:
    """Ensure the job ``name`` (or ``identifier``) is not in ``user``'s crontab."""
    name = str(name).strip()
    if identifier is False:
        identifier = name
    ret = _ret(name)
    if _testing():
        if _status(user, name, identifier) == "absent":
            ret["comment"] = f"Cron {name} is absent"
        else:
            ret.update(result=None, comment=f"Cron {name} is set to be removed")
        return ret
    if special is None:
        data = _salt("cron.rm_job")(user, name, identifier=identifier)
    else:
        data = _salt("cron.rm_special")(user, name, special=special, identifier=identifier)
    if data == "absent":
        ret["comment"] = f"Cron {name} already absent"
    elif data == "removed":
        ret.update(comment=f"Cron {name} removed from {user}'s crontab", changes={user: name})
    else:
        ret.update(result=False, comment=f"Cron {name} for user {user} failed to commit with error {data}")
    return ret


def _env_status(user: str, name: str, value: Any) -> str:
    wanted = _salt("cron.env_value")(value)
    for env in _salt("cron.list_tab")(user)["env"]:
        if env["name"] == name:
            return "present" if _salt("cron.env_value")(env["value"]) == wanted else "update"
    return "absent"


def env_present(name: str, value: Any = None, user: str = "root") -> dict[str, Any]:
    """Ensure the variable ``name=value`` is set in ``user``'s crontab."""
    ret = _ret(name)
    if _testing():
        status = _env_status(user, name, value)
        ret["result"] = True if status == "present" else None
        ret["comment"] = {
            "absent": f"Cron env {name} is set to be added",
            "present": f"Cron env {name} already present",
            "update": f"Cron env {name} is set to be updated",
        }[status]
        return ret
    data = _salt("cron.set_env")(user, name, value=value)
    return _outcome(ret, data, "Cron env", name, user)


def env_absent(name: str, user: str = "root") -> dict[str, Any]:
    """Ensure the variable ``name`` is not set in ``user``'s crontab."""
    name = str(name).strip()
    ret = _ret(name)
    if _testing():
        if _env_status(user, name, None) == "absent":
            ret["comment"] = f"Cron env {name} is absent"
        else:
            ret.update(result=None, comment=f"Cron env {name} is set to be removed")
        return ret
    data = _salt("cron.rm_env")(user, name)
    if data == "absent":
        ret["comment"] = f"Cron env {name} already absent"
    elif data == "removed":
        ret.update(comment=f"Cron env {name} removed from {user}'s crontab", changes={user: name})
    else:
        ret.update(result=False, comment=f"Cron env {name} for user {user} failed to commit with error {data}")
    return ret


def _check_hash(path: str, source_hash: str) -> str | None:
    """None when ``path`` has ``source_hash`` (``[type=]hexdigest``), else the problem."""
    kind, _, digest = str(source_hash).rpartition("=")
    digest = digest.strip().lower()
    if not kind:
        kind = {32: "md5", 40: "sha1", 64: "sha256", 128: "sha512"}.get(len(digest), "")
    if not kind:
        return f"Invalid source_hash: {source_hash}"
    actual = _salt("file.get_hash")(path, kind)
    if actual != digest:
        return f"Source file {path} does not match the {kind} hash {digest} (it has {actual})"
    return None


def _source_text(name: str, source_hash: str, template: Any, context: Any, defaults: Any) -> str:
    env = str(__env__ if "__env__" in globals() else "base")
    local = _salt("cp.cache_file")(name, saltenv=env)
    if not local:
        raise ValueError(f"Source file {name} not found in saltenv '{env}'")
    if source_hash:
        problem = _check_hash(str(local), source_hash)
        if problem:
            raise ValueError(problem)
    with open(str(local), encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    if template:
        if "file.apply_template_on_contents" not in __salt__:
            raise ValueError(f"Templates in cron.file are not available on this host (template: {template})")
        ctx = dict(defaults or {})
        ctx.update(context or {})
        text = _salt("file.apply_template_on_contents")(
            text, template=template, context=ctx, defaults=None, saltenv=env
        )
    return text


def file(
    name: str,
    source_hash: str = "",
    source_hash_name: str | None = None,
    user: str = "root",
    template: Any = None,
    context: Any = None,
    replace: bool = True,
    defaults: Any = None,
    backup: str = "",
    **kwargs: Any,
) -> dict[str, Any]:
    """Install the file ``name`` (``salt://`` or a local path) as ``user``'s whole crontab."""
    ret = _ret(name)
    info = _salt("user.info")(user) if "user.info" in __salt__ else {}
    if not info or not info.get("groups"):
        ret.update(result=False, comment=f"Could not identify group for user {user}")
        return ret
    group = info["groups"][0]
    current = _salt("cron.raw_cron")(user)
    if not replace and current.strip():
        ret["comment"] = f"User {user} already has a crontab. No changes made"
        return ret
    if not current.endswith("\n"):
        current += "\n"
    try:
        wanted = _source_text(name, source_hash, template, context, defaults)
    except (OSError, ValueError) as exc:
        ret.update(result=False, comment=f"Unable to manage file: {exc}")
        return ret
    if current == wanted:
        ret["comment"] = f"Crontab for user {user} is in the correct state"
        return ret
    diff = "".join(difflib.unified_diff(current.splitlines(keepends=True), wanted.splitlines(keepends=True), "", ""))
    if _testing():
        ret.update(result=None, comment=f"The following values are set to be changed:\ndiff: {diff}\n")
        return ret
    res = _salt("cron.write_cron_text")(user, wanted)
    if res.get("retcode") != 0:
        ret.update(result=False, comment=f"Unable to update user {user} crontab. Error: {res.get('stderr')}")
        return ret
    ret["changes"] = {"diff": diff}
    if os.geteuid() != info.get("uid"):
        ret["changes"]["user"] = user
    if _salt("file.group_to_gid")(group) != os.getegid():
        ret["changes"]["group"] = group
    ret["comment"] = f"Crontab for user {user} was updated"
    return ret
