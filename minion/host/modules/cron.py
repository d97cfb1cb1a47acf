"""Execution module ``cron``: users' crontabs, in the layout Salt writes.

Runs on the managed host. Crontabs are read with ``crontab -u USER -l`` and
written with ``crontab -u USER -`` (the new table on stdin), both through
``__salt__["cmd.run_all"]`` with a time limit; nothing else touches the spool.

The layout is Salt's, so tables written by Salt keep working and the other
way round: lines above ``# Lines below here are managed by Salt, do not
edit`` are kept as they are; below it come environment lines, then timed
jobs, then ``@special`` jobs. A job's comment line carries its identifier
(``# comment SALT_CRON_IDENTIFIER:id``); a disabled job starts with
``#DISABLED#``. ``random`` (or ``a:b``) in a time field picks a value when
the job is first written and keeps it afterwards.

Return values are Salt 3007's: ``set_job`` / ``set_special`` / ``set_env``
return ``"new"``, ``"updated"``, ``"present"`` or the error text of
``crontab``; ``rm_job`` / ``rm_special`` / ``rm_env`` return ``"removed"``,
``"absent"`` or the error text.
"""

from __future__ import annotations

import logging
import os
import random
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

TAG = "# Lines below here are managed by Salt, do not edit"
IDENT = "SALT_CRON_IDENTIFIER"
_NO_ID = "NO ID SET"
_TIMEOUT = 60
_FIELDS = ("minute", "hour", "daymonth", "month", "dayweek")
_RANGES = {"minute": (0, 59), "hour": (0, 23), "month": (1, 12), "dayweek": (0, 6)}


def __virtual__() -> Any:
    if os.name != "posix":
        return False, "the cron module needs a POSIX host"
    return True


def _cmd(args: list[str], stdin: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {
        "python_shell": False,
        "timeout": _TIMEOUT,
        "ignore_retcode": True,
        "output_loglevel": "quiet",
        "rstrip": False,
    }
    if stdin is not None:
        call["stdin"] = stdin
    return dict(__salt__["cmd.run_all"](args, **call))


def raw_cron(user: str, **kwargs: Any) -> str:
    """The text of ``user``'s crontab ("" when there is none)."""
    res = _cmd(["crontab", "-u", str(user), "-l"])
    if res.get("retcode") != 0:
        return ""
    return str(res.get("stdout") or "")


def _entry_id(entry: dict[str, Any]) -> str:
    return str(entry["identifier"]) if entry.get("identifier") else _NO_ID


def _matches(entry: dict[str, Any], cmd: Any, identifier: Any = None) -> bool:
    """Does ``entry`` stand for the job (cmd, identifier)?

    An entry with an identifier matches that identifier only; one without
    matches its command.
    """
    if entry.get("identifier"):
        return str(entry["identifier"]) == (str(identifier) if identifier else _NO_ID)
    return entry.get("cmd") == cmd


def _differs(old: Any, new: Any) -> bool:
    """Does ``new`` ask for something other than ``old``? None asks for nothing;
    ``random`` asks only for a value other than ``*``."""
    if old == new or new is None:
        return False
    if new == "random":
        return old == "*"
    return True


def list_tab(user: str, **kwargs: Any) -> dict[str, list[Any]]:
    """``user``'s crontab as ``{"pre": [...], "env": [...], "crons": [...], "special": [...]}``."""
    tab: dict[str, list[Any]] = {"pre": [], "crons": [], "special": [], "env": []}
    managed = False
    comment: str | None = None
    identifier: str | None = None
    for line in raw_cron(user).splitlines():
        if line == TAG:
            managed = True
            continue
        if not managed:
            tab["pre"].append(line)
            continue
        disabled = line.startswith("#DISABLED#")
        if disabled:
            line = line[len("#DISABLED#") :]
        if line.startswith("@"):
            parts = line.split()
            if len(parts) < 2:
                continue
            tab["special"].append(
                {
                    "spec": parts[0],
                    "cmd": " ".join(parts[1:]),
                    "identifier": identifier,
                    "comment": comment,
                    "commented": disabled,
                }
            )
            comment = identifier = None
        elif line.startswith("#"):
            text = line.lstrip("# ")
            if IDENT in text:
                before, _, after = text.partition(IDENT)
                text = before.rstrip()
                if len(after) > 1:
                    identifier = after[1:]
            comment = text if comment is None else f"{comment}\n{text}"
        elif line.find("=") > 0 and (" " not in line or line.index("=") < line.index(" ")):
            key, _, value = line.partition("=")
            tab["env"].append({"name": key, "value": value})
        elif len(line.split(" ")) > 5:
            parts = line.split(" ")
            entry: dict[str, Any] = dict(zip(_FIELDS, parts[:5]))
            entry.update(cmd=" ".join(parts[5:]), identifier=identifier, comment=comment, commented=disabled)
            tab["crons"].append(entry)
            comment = identifier = None
    return tab


ls = list_tab


def _comment_lines(entry: dict[str, Any], strip: bool) -> str:
    if entry.get("comment") is None and entry.get("identifier") is None:
        return ""
    text = "#"
    if entry.get("comment"):
        body = str(entry["comment"]).rstrip() if strip else str(entry["comment"])
        text += " " + body.replace("\n", "\n# ")
    if entry.get("identifier"):
        text += f" {IDENT}:{entry['identifier']}"
    return text + "\n"


def _render(tab: dict[str, list[Any]]) -> str:
    out = [f"{line}\n" for line in tab["pre"]]
    if not out or out[-1] != f"{TAG}\n":
        out.append(f"{TAG}\n")
    for env in tab["env"]:
        value = env.get("value")
        out.append(f'{env["name"]}=""\n' if value in (None, "") else f"{env['name']}={value}\n")
    for job in tab["crons"]:
        out.append(_comment_lines(job, strip=False))
        times = " ".join(str(job[f]) for f in _FIELDS)
        out.append(f"{'#DISABLED#' if job.get('commented') is True else ''}{times} {job['cmd']}\n")
    for job in tab["special"]:
        out.append(_comment_lines(job, strip=True))
        out.append(f"{'#DISABLED#' if job.get('commented') is True else ''}{job['spec']} {job['cmd']}\n")
    return "".join(out)


def _write(user: str, tab: dict[str, list[Any]]) -> dict[str, Any]:
    return _cmd(["crontab", "-u", str(user), "-"], stdin=_render(tab))


def _error(res: dict[str, Any]) -> str:
    return str(res.get("stderr") or res.get("stdout") or f"crontab exited {res.get('retcode')}").rstrip()


def _pick(field: str, value: str, month: str = "*") -> str:
    """A concrete value for ``random`` or ``a:b`` in a new job's time field."""
    if field == "daymonth":
        if value != "random":
            return value
        top = 31 if month in "1 3 5 7 8 10 12".split() else 30 if month in "4 6 9 11".split() else 28
        return str(random.randint(1, top))
    if value == "random":
        low, high = _RANGES[field]
        return str(random.randint(low, high))
    bounds = value.split(":")
    if len(bounds) == 2 and all(b.strip().isdigit() for b in bounds):
        low, high = sorted(int(b) for b in bounds)
        return str(random.randint(low, high))
    return value


def _merged_identifier(entry: dict[str, Any], identifier: Any) -> Any:
    return identifier if identifier else entry.get("identifier")


def set_job(
    user: str,
    minute: Any,
    hour: Any,
    daymonth: Any,
    month: Any,
    dayweek: Any,
    cmd: str,
    commented: bool = False,
    comment: str | None = None,
    identifier: Any = None,
    **kwargs: Any,
) -> str:
    """Make sure the timed job ``cmd`` (or ``identifier``) is in ``user``'s crontab."""
    want = {f: str(v).lower() for f, v in zip(_FIELDS, (minute, hour, daymonth, month, dayweek))}
    tab = list_tab(user)
    for kind in ("crons", "special"):
        for idx, entry in enumerate(tab[kind]):
            if not _matches(entry, cmd, identifier):
                continue
            checks = [
                (entry.get("comment"), comment),
                (entry.get("commented"), commented),
                (identifier, _entry_id(entry)),
                (entry.get("spec"), None),
            ]
            checks += [(entry.get(f), want[f]) for f in _FIELDS]
            if entry.get("identifier") or identifier:
                checks.append((entry.get("cmd"), cmd))
            if not any(_differs(old, new) for old, new in checks):
                return "present"
            del tab[kind][idx]
            job = {f: (want[f] if _differs(entry.get(f), want[f]) else entry.get(f)) for f in _FIELDS}
            if kind == "special":  # a special job becoming a timed one takes the asked times
                job = {f: _pick(f, want[f], want["month"]) for f in _FIELDS}
            job.update(
                cmd=cmd if _differs(entry["cmd"], cmd) else entry["cmd"],
                identifier=_merged_identifier(entry, identifier),
                comment=comment if _differs(entry.get("comment"), comment) else entry.get("comment"),
                commented=commented if _differs(entry.get("commented"), commented) else entry.get("commented"),
            )
            tab["crons"].append(job)
            res = _write(user, tab)
            return "updated" if res.get("retcode") == 0 else _error(res)
    job = {f: _pick(f, want[f]) for f in _FIELDS if f != "daymonth"}
    job["daymonth"] = _pick("daymonth", want["daymonth"], job["month"])
    job = {f: job[f] for f in _FIELDS}
    job.update(cmd=cmd, identifier=identifier, comment=comment, commented=commented)
    tab["crons"].append(job)
    res = _write(user, tab)
    return "new" if res.get("retcode") == 0 else _error(res)


def set_special(
    user: str,
    special: str,
    cmd: str,
    commented: bool = False,
    comment: str | None = None,
    identifier: Any = None,
    **kwargs: Any,
) -> str:
    """Make sure the ``@special`` job ``cmd`` (or ``identifier``) is in ``user``'s crontab."""
    tab = list_tab(user)
    for kind in ("crons", "special"):
        for idx, entry in enumerate(tab[kind]):
            if not _matches(entry, cmd, identifier):
                continue
            checks = [
                (entry.get("comment"), comment),
                (entry.get("commented"), commented),
                (identifier, _entry_id(entry)),
                (entry.get("spec"), special),
            ]
            if entry.get("identifier") or identifier:
                checks.append((entry.get("cmd"), cmd))
            if not any(_differs(old, new) for old, new in checks):
                return "present"
            del tab[kind][idx]
            tab["special"].append(
                {
                    "spec": special if _differs(entry.get("spec"), special) else entry.get("spec"),
                    "cmd": cmd if _differs(entry["cmd"], cmd) else entry["cmd"],
                    "identifier": _merged_identifier(entry, identifier),
                    "comment": comment if _differs(entry.get("comment"), comment) else entry.get("comment"),
                    "commented": commented if _differs(entry.get("commented"), commented) else entry.get("commented"),
                }
            )
            res = _write(user, tab)
            return "updated" if res.get("retcode") == 0 else _error(res)
    tab["special"].append(
        {"spec": special, "cmd": cmd, "identifier": identifier, "comment": comment, "commented": commented}
    )
    res = _write(user, tab)
    return "new" if res.get("retcode") == 0 else _error(res)


def get_entry(user: str, identifier: Any = None, cmd: str | None = None, **kwargs: Any) -> dict[str, Any] | bool:
    """The job with this identifier (or else this command), or False."""
    if identifier and cmd:
        cmd = None
    tab = list_tab(user)
    for entry in tab["crons"] + tab["special"]:
        if (identifier and entry.get("identifier") == identifier) or (cmd and entry.get("cmd") == cmd):
            return entry
    return False


def _time_matches(entry: dict[str, Any], **fields: Any) -> bool:
    return all(value is None or str(entry.get(f)) == str(value) for f, value in fields.items())


def rm_job(
    user: str,
    cmd: str,
    minute: Any = None,
    hour: Any = None,
    daymonth: Any = None,
    month: Any = None,
    dayweek: Any = None,
    identifier: Any = None,
    **kwargs: Any,
) -> str:
    """Remove the first timed job matching ``cmd`` / ``identifier`` (and the times given)."""
    tab = list_tab(user)
    for idx, entry in enumerate(tab["crons"]):
        if _matches(entry, cmd, identifier) and _time_matches(
            entry, minute=minute, hour=hour, daymonth=daymonth, month=month, dayweek=dayweek
        ):
            del tab["crons"][idx]
            res = _write(user, tab)
            return "removed" if res.get("retcode") == 0 else _error(res)
    return "absent"


rm = rm_job


def rm_special(user: str, cmd: str, special: str | None = None, identifier: Any = None, **kwargs: Any) -> str:
    """Remove the first ``@special`` job matching ``cmd`` / ``identifier`` (and ``special``)."""
    tab = list_tab(user)
    for idx, entry in enumerate(tab["special"]):
        if _matches(entry, cmd, identifier) and (special is None or entry["spec"] == special):
            del tab["special"][idx]
            res = _write(user, tab)
            return "removed" if res.get("retcode") == 0 else _error(res)
    return "absent"


def set_env(user: str, name: str, value: Any = None, **kwargs: Any) -> str:
    """Make sure ``name=value`` is among ``user``'s crontab variables."""
    tab = list_tab(user)
    for idx, env in enumerate(tab["env"]):
        if env["name"] == name:
            if env_value(env["value"]) == env_value(value):
                return "present"
            del tab["env"][idx]
            tab["env"].append({"name": name, "value": value})
            res = _write(user, tab)
            return "updated" if res.get("retcode") == 0 else _error(res)
    tab["env"].append({"name": name, "value": value})
    res = _write(user, tab)
    return "new" if res.get("retcode") == 0 else _error(res)


def env_value(value: Any) -> str:
    """A variable's value as the table shows it read back (``""`` for none)."""
    return "" if value in (None, "", '""') else str(value)


def rm_env(user: str, name: str, **kwargs: Any) -> str:
    tab = list_tab(user)
    kept = [env for env in tab["env"] if env["name"] != name]
    if len(kept) == len(tab["env"]):
        return "absent"
    tab["env"] = kept
    res = _write(user, tab)
    return "removed" if res.get("retcode") == 0 else _error(res)


def write_cron_file_verbose(user: str, path: str, **kwargs: Any) -> dict[str, Any]:
    """Install the file ``path`` as ``user``'s crontab; the ``cmd.run_all`` result."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    return _cmd(["crontab", "-u", str(user), "-"], stdin=text)


def write_cron_file(user: str, path: str, **kwargs: Any) -> bool:
    return write_cron_file_verbose(user, path).get("retcode") == 0


def write_cron_text(user: str, text: str, **kwargs: Any) -> dict[str, Any]:
    """Install ``text`` as ``user``'s crontab; the ``cmd.run_all`` result."""
    return _cmd(["crontab", "-u", str(user), "-"], stdin=text)
