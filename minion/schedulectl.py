"""``schedule.*`` on the running minion: each call's action on its :class:`~briny.common.schedule.Schedule`.

The execution module (:mod:`briny.minion.host.modules.schedule`) sends ``(action, args)`` to the daemon
(``__job__.schedule``); the daemon answers with :func:`control` on its loop. Answers are Salt
3007's (``{"result", "comment"[, "changes"]}``; ``list`` gives the mapping). ``save`` writes the
entries not from pillar to ``<config dir>/minion.d/_schedule.conf`` (as Salt does; the minion reads
it at start with the rest of ``minion.d``); ``reload`` reads that file back.
"""

from __future__ import annotations

import datetime
import logging
from pathlib import Path
from typing import Any


from briny.common.exceptions import ConfigError
from briny.common.schedentry import TIME_FMT, parse_entry
from briny.common.schedfile import read_saved, write_saved
from briny.common.schedule import Schedule

log = logging.getLogger(__name__)

ACTIONS = frozenset(
    {"list", "add", "delete", "modify", "enable", "disable", "enable_job", "disable_job", "run_job", "save", "reload"}
    | {"postpone_job", "skip_job", "next_fire_time"}
)


def _name(args: dict[str, Any]) -> str | None:
    name = args.get("name")
    return str(name) if name not in (None, "") else None


def _options(args: dict[str, Any]) -> dict[str, Any]:
    """The entry options among a call's keyword arguments (Salt's ``job_args``/``job_kwargs`` kept)."""
    return {k: v for k, v in args.items() if k not in ("name", "persist", "offline", "test") and not k.startswith("__")}


def control(sched: Schedule, action: str, args: dict[str, Any], path: Path) -> Any:
    """Apply one ``schedule.<action>`` to ``sched`` and give Salt's answer (loop)."""
    if action == "list":
        where = args.get("where") if args.get("where") in ("pillar", "opts") else None
        return sched.listing(bool(args.get("show_all")), args.get("show_disabled", True) is not False, where)
    if action == "enable":
        sched.enabled = True
        return {"result": True, "comment": "Enabled schedule on minion.", "changes": {}}
    if action == "disable":
        sched.enabled = False
        return {"result": True, "comment": "Disabled schedule on minion.", "changes": {}}
    if action == "save":
        return _save(sched, path)
    if action == "reload":
        return _reload(sched, path)
    name = _name(args)
    if name is None:
        return {"result": False, "comment": "Job name is required.", "changes": {}}
    entry = sched.entries.get(name)
    if action == "next_fire_time":  # Salt answers None for a job it does not have
        moment = sched.next_fire_time(name)
        return {"result": True, "next_fire_time": moment.strftime(TIME_FMT) if moment else None}
    if action == "add":
        if entry is not None:
            return {"result": False, "comment": f"Job {name} already exists in schedule.", "changes": {}}
        return _put(sched, name, _options(args), "added", f"Added job: {name} to schedule.", "added")
    if entry is None:
        missing = "does not exist in schedule." if action == "modify" else "does not exist."
        return {"result": False, "comment": f"Job {name} {missing}", "changes": {}}
    if action == "delete":
        sched.drop(name)
        return {"result": True, "comment": f"Deleted Job {name} from schedule.", "changes": {name: "removed"}}
    if action == "modify":
        options = _options(args)
        if {**entry.raw, "name": name} == {**options, "name": name}:
            return {"result": True, "comment": f"Job {name} in correct state", "changes": {}}
        old = {**entry.raw, "name": name}
        answer = _put(sched, name, options, entry.source, f"Modified job: {name} in schedule.", "modified")
        if answer["result"]:
            answer["changes"] = {name: {"old": old, "new": {**options, "name": name}}}
        return answer
    if action in ("enable_job", "disable_job"):
        on = action == "enable_job"
        entry.enabled = on
        entry.raw["enabled"] = on
        word = "Enabled" if on else "Disabled"
        return {"result": True, "comment": f"{word} Job {name} in schedule.", "changes": {name: word.lower()}}
    if action in ("postpone_job", "skip_job"):
        return _move_run(sched, entry.name, action, args)
    if action == "run_job":
        if not entry.enabled and not args.get("force"):
            return {"result": False, "comment": f"Job {name} is disabled.", "changes": {}}
        sched.run_now(name)
        return {"result": True, "comment": f"Scheduling Job {name} on minion.", "changes": {}}
    return {"result": False, "comment": f"schedule has no action {action!r}", "changes": {}}


def _move_run(sched: Schedule, name: str, action: str, args: dict[str, Any]) -> dict[str, Any]:
    """``postpone_job`` (skip the run at ``time``, run at ``new_time``) and ``skip_job``."""
    fmt = str(args.get("time_fmt") or TIME_FMT)
    try:
        current = datetime.datetime.strptime(str(args.get("time")), fmt)
        new = datetime.datetime.strptime(str(args.get("new_time")), fmt) if action == "postpone_job" else None
    except ValueError:
        return {"result": False, "comment": "Date string could not be parsed."}
    word, failed = ("Postponed Job", "postpone") if new is not None else ("Added Skip Job", "skip")
    if not sched.entries[name].enabled:
        return {"result": False, "comment": f"Failed to {failed} job {name} in schedule."}
    if new is not None:
        sched.postpone(name, current, new)
    else:
        sched.skip(name, current)
    return {"result": True, "comment": f"{word} {name} in schedule."}


def _put(sched: Schedule, name: str, options: dict[str, Any], source: str, comment: str, change: str) -> dict[str, Any]:
    try:
        entry = parse_entry(name, options, source)
    except ConfigError as exc:
        log.error("%s", exc)
        return {"result": False, "comment": str(exc), "changes": {}}
    sched.put(entry)
    return {"result": True, "comment": comment, "changes": {name: change}}


def _save(sched: Schedule, path: Path) -> dict[str, Any]:
    try:
        write_saved(path, sched.saved())
    except OSError as exc:
        log.error("cannot save the schedule to %s: %s", path, exc)
        return {"result": False, "comment": f"Failed to save schedule: {exc}", "changes": {}}
    return {"result": True, "comment": "Schedule (non-pillar items) saved.", "changes": {}}


def _reload(sched: Schedule, path: Path) -> dict[str, Any]:
    try:
        saved = read_saved(path)
    except ConfigError as exc:
        return {"result": False, "comment": [f"Unable to read existing schedule file: {exc}"], "changes": {}}
    if not saved:
        return {
            "result": False,
            "comment": ["Failed to reload schedule on minion.  Saved file is empty or invalid."],
            "changes": {},
        }
    for name in [n for n, e in sched.entries.items() if e.source == "added"]:
        sched.drop(name)
    refused = sched.load(saved, "config")
    comment = ["Reloaded schedule on minion from schedule.conf."] + [why for why in refused.values()]
    return {"result": not refused, "comment": comment, "changes": {}}
