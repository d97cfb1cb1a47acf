"""The ``schedule`` execution module: the running minion's schedule (Salt 3007's ``schedule.*``).

Each call asks the minion daemon (``__job__.schedule``), which owns the schedule
(:mod:`briny.common.schedule`) and answers with :func:`briny.minion.schedulectl.control`. A call run
outside the daemon (``briny-call --local``, ``file_client: local``) asks the minion daemon running
on this host over its local socket (:func:`briny.minion.localapi.daemon_control`), as Salt's
``salt-call --local`` reaches its running minion over the event bus. Without a daemon there is no
running schedule: ``list`` shows an empty one (``offline=True``: the saved file), the others say
so, as Salt's local calls do. Answers,
comments and ``test=True`` are Salt's (goldens: ``tests/golden/compiler/schedule_funcs``).
``copy`` and ``move`` need Salt's peer publishing (``publish.publish``), which briny does not
have: they say so and name the ``schedule.add`` to run on the targets instead.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from briny.common import datestr
from briny.common.schedfile import read_saved, save_path, write_saved
from briny.common.exceptions import ConfigError
from briny.common.yamlout import safe_dump

if TYPE_CHECKING:
    from briny.common.dunders import __job__, __opts__

log = logging.getLogger(__name__)

__func_alias__ = {"list_": "list", "reload_": "reload"}

NO_DAEMON = "Event module not available. Schedule {} failed."
TIME_FMT = "%Y-%m-%dT%H:%M:%S"
UNITS = ("seconds", "minutes", "hours", "days")
# what schedule.list shows of an entry (Salt's SCHEDULE_CONF)
SHOWN = frozenset(
    {"name", "maxrunning", "function", "splay", "range", "when", "once", "once_fmt", "returner", "jid_include"}
    | {"args", "kwargs", "_seconds", "seconds", "minutes", "hours", "days", "enabled", "return_job", "metadata"}
    | {"cron", "until", "after", "return_config", "return_kwargs", "run_on_start", "skip_during_range"}
    | {"run_after_skip_range"}
)
HIDDEN = ("enabled", "skip_function", "skip_during_range")  # schedule-wide keys, not jobs
# build_schedule_item: the options copied as given, in Salt's order
COPIED = ("range", "when", "once", "once_fmt", "cron", "returner", "after", "return_config", "return_kwargs")
COPIED_TAIL = ("until", "run_on_start", "skip_during_range")


def _ask(action: str, args: dict[str, Any]) -> Any:
    hook = __job__.schedule
    if not callable(hook):
        return None
    return hook(action, {k: v for k, v in args.items() if not str(k).startswith("__")})


def _answer(action: str, args: dict[str, Any], word: str) -> dict[str, Any]:
    reply = _ask(action, args)
    if not isinstance(reply, dict):
        return {"result": True, "comment": NO_DAEMON.format(word)}
    return reply


def _test(kwargs: dict[str, Any]) -> bool:
    return bool(kwargs.get("test"))


def _saved() -> dict[str, Any]:
    saved = read_saved(save_path(__opts__))
    return dict(saved) if isinstance(saved, dict) else {}


def list_(
    show_all: bool = False,
    show_disabled: bool = True,
    where: str | None = None,
    return_yaml: bool = True,
    offline: bool = False,
    **kwargs: Any,
) -> Any:
    """The jobs scheduled on this minion: Salt's YAML text (``schedule: {...}``, each job marked
    ``saved`` or not), or the mapping with ``return_yaml=False``. ``where="pillar"`` / ``"opts"``:
    only the pillar's / the config's jobs; ``offline=True`` reads the saved file instead."""
    try:
        saved = _saved()
    except ConfigError as exc:
        if offline:
            return {"result": False, "comment": str(exc)}
        log.warning("%s", exc)
        saved = {}
    if offline:
        schedule = dict(saved)
    else:
        asked = _ask("list", {"show_all": True, "show_disabled": True, "where": where})
        schedule = dict(asked) if isinstance(asked, dict) else {}
    for name in list(schedule):
        if name in HIDDEN:
            continue
        job = schedule[name]
        if name.startswith("__") and not show_all or not isinstance(job, dict):
            del schedule[name]
            continue
        job = {k: {"true": True, "false": False}.get(v, v) if isinstance(v, str) else v for k, v in job.items()}
        job = {k: v for k, v in job.items() if k in SHOWN and v is not None}
        job.setdefault("enabled", True)
        if not show_disabled and not job["enabled"]:
            del schedule[name]
            continue
        job.pop("_seconds", None)
        schedule[name] = job
    if not return_yaml:
        return schedule
    for name, job in schedule.items():
        if isinstance(job, dict):
            job["saved"] = name in saved
    return safe_dump({"schedule": schedule}, default_flow_style=False if schedule else None)


def is_enabled(name: str | None = None) -> Any:
    """Without ``name``: whether the schedule runs; with it: that job's options ({} when none)."""
    current = list_(show_all=False, return_yaml=False)
    if not name:
        return current.get("enabled", True)
    return current.get(name, {})


def build_schedule_item(name: str, **kwargs: Any) -> Any:
    """A job's options as ``schedule.add`` stores them (``job_args`` -> ``args``, defaults filled
    in), or ``{"comment", "result": False}`` saying what is wrong."""
    if not name:
        return {"comment": "Job name is required.", "result": False}
    if "function" not in kwargs:
        return {"comment": "Job function is required.", "result": False}
    item: dict[str, Any] = OrderedDict(function=kwargs["function"])
    if any(unit in kwargs for unit in UNITS) and ("when" in kwargs or "cron" in kwargs):
        comment = 'Unable to use "seconds", "minutes", "hours", or "days" with "when" or "cron" options.'
        return {"comment": comment, "result": False}
    if "when" in kwargs and "cron" in kwargs:
        return {"comment": 'Unable to use "when" and "cron" options together.  Ignoring.', "result": False}
    item.update((unit, kwargs[unit]) for unit in UNITS if unit in kwargs)
    item.update((key, kwargs[key]) for key in ("return_job", "metadata") if key in kwargs)
    if "job_args" in kwargs:
        if not isinstance(kwargs["job_args"], list):
            return {"comment": "job_args is not a list. please correct and try again.", "result": False}
        item["args"] = kwargs["job_args"]
    if "job_kwargs" in kwargs:
        if not isinstance(kwargs["job_kwargs"], dict):
            return {"comment": "job_kwargs is not a dict. please correct and try again.", "result": False}
        item["kwargs"] = kwargs["job_kwargs"]
    item["maxrunning"] = kwargs.get("maxrunning", 1)
    item["name"] = kwargs.get("name", name)
    item["enabled"] = kwargs.get("enabled", True)
    item["jid_include"] = kwargs.get("jid_include", True)
    if "splay" in kwargs:
        splay = kwargs["splay"]
        if isinstance(splay, dict):
            item["splay"] = OrderedDict(start=splay.get("start"), end=splay.get("end"))
        else:
            item["splay"] = splay
    if "when" in kwargs:
        for when in kwargs["when"] if isinstance(kwargs["when"], list) else [kwargs["when"]]:
            try:
                datestr.parse(when)
            except ConfigError:
                return {"comment": f'Schedule item {when} for "when" in invalid.', "result": False}
    item.update((key, kwargs[key]) for key in COPIED + COPIED_TAIL if key in kwargs)
    return dict(item)


def add(name: str, **kwargs: Any) -> dict[str, Any]:
    """Add job ``name`` (``function``, ``seconds``/``minutes``/``hours``/``days`` or ``when`` /
    ``cron`` / ``once``, ``job_args``, ``job_kwargs``, ...)."""
    if name in list_(show_all=True, return_yaml=False):
        return {"comment": f"Job {name} already exists in schedule.", "result": False, "changes": {}}
    if any(unit in kwargs for unit in UNITS) and ("when" in kwargs or "cron" in kwargs):
        comment = 'Error: Unable to use "seconds", "minutes", "hours", or "days" with "when" or "cron" options.'
        return {"comment": comment, "result": False, "changes": {}}
    item = build_schedule_item(name, **kwargs)
    if item.get("result") is False:
        return dict(item)
    if _test(kwargs):
        return {"comment": f"Job: {name} would be added to schedule.", "result": True, "changes": {}}
    return _answer("add", {**item, "name": name}, "add")


def delete(name: str, **kwargs: Any) -> dict[str, Any]:
    """Remove job ``name``."""
    if not name:
        return {"comment": "Job name is required.", "result": False, "changes": {}}
    if _test(kwargs):
        return {"comment": f"Job: {name} would be deleted from schedule.", "result": True, "changes": {}}
    if not _exists(name):
        return {"comment": f"Job {name} does not exist.", "result": False, "changes": {}}
    return _answer("delete", {"name": name}, "add")


def modify(name: str, **kwargs: Any) -> dict[str, Any]:
    """Replace job ``name``'s options by those given (its ``function`` kept when none is given)."""
    if any(unit in kwargs for unit in UNITS) and ("when" in kwargs or "cron" in kwargs):
        comment = 'Error: Unable to use "seconds", "minutes", "hours", or "days" with "when" option.'
        return {"comment": comment, "changes": {}, "result": False}
    if "when" in kwargs and "cron" in kwargs:
        return {
            "comment": 'Unable to use "when" and "cron" options together.  Ignoring.',
            "changes": {},
            "result": False,
        }
    current = list_(show_all=True, return_yaml=False)
    if name not in current:
        return {"comment": f"Job {name} does not exist in schedule.", "changes": {}, "result": False}
    kwargs.setdefault("function", current[name].get("function"))
    item = build_schedule_item(name, **{k: v for k, v in kwargs.items() if k != "test"})
    if item.get("result") is False:
        return dict(item)
    if _test(kwargs):
        if item == current[name]:
            return {"comment": f"Job {name} in correct state", "changes": {}, "result": True}
        changes = {name: {"old": current[name], "new": item}}
        return {"comment": f"Job: {name} would be modified in schedule.", "changes": changes, "result": True}
    return _answer("modify", {**item, "name": name}, "modify")


def purge(**kwargs: Any) -> dict[str, Any]:
    """Remove every job (not the daemon's own ``__*`` ones); ``offline=True``: from the saved file."""
    ret: dict[str, Any] = {"comment": [], "changes": {}, "result": True}
    offline = bool(kwargs.get("offline"))
    current = list_(show_all=True, return_yaml=False, offline=offline)
    if not isinstance(current, dict) or "result" in current and "comment" in current:
        return {"comment": str(current.get("comment")), "changes": {}, "result": False}
    for name in list(current):
        if name == "enabled" or name.startswith("__"):
            continue
        if _test(kwargs):
            ret["comment"].append(f"Job: {name} would be deleted from schedule.")
        elif offline:
            del current[name]
            ret["comment"].append(f"Deleted job: {name} from schedule.")
            ret["changes"][name] = "removed"
        else:
            reply = _ask("delete", {"name": name})
            if not isinstance(reply, dict):
                return {"comment": NO_DAEMON.format("add"), "changes": {}, "result": True}
            if reply.get("result"):
                ret["changes"][name] = "removed"
                ret["comment"].append(f"Deleted job: {name} from schedule.")
            else:
                ret["comment"].append(f"Failed to delete job {name} from schedule.")
    if offline and not _test(kwargs):
        try:
            write_saved(save_path(__opts__), current)
        except OSError as exc:
            log.error("Failed to persist the updated schedule: %s", exc)
    return ret


def _parses(value: Any, time_fmt: str) -> bool:
    try:
        dt.datetime.strptime(str(value), time_fmt)
    except (TypeError, ValueError):
        log.error("Date string could not be parsed: %s, %s", value, time_fmt)
        return False
    return True


def _exists(name: str) -> bool:
    return name in list_(show_all=True, where="opts", return_yaml=False) or name in list_(
        show_all=True, where="pillar", return_yaml=False
    )


def _change_runs(action: str, name: str, times: dict[str, Any], missing: dict[str, str], time_fmt: str) -> Any:
    """``postpone_job`` / ``skip_job``: the times checked (``missing``: what each absent one is
    called), then the daemon's answer (Salt's)."""
    if not name:
        return {"comment": "Job name is required.", "result": False}
    for key, value in times.items():
        if not value:
            return {"comment": missing[key], "result": False}
        if not _parses(value, time_fmt):
            return {"comment": "Date string could not be parsed.", "result": False}
    word = action.split("_")[0]
    if __opts__.get("test"):
        done = {"postpone": "postponed", "skip": "skipped"}[word]
        return {"comment": f"Job: {name} would be {done} in schedule.", "result": True}
    if not _exists(name):
        return {"comment": f"Job {name} does not exist.", "result": False}
    reply = _ask(action, {"name": name, **times, "time_fmt": time_fmt})
    if not isinstance(reply, dict):
        return {"comment": NO_DAEMON.format(f"{word} job"), "result": True}
    return reply


def postpone_job(name: str, current_time: str, new_time: str, **kwargs: Any) -> dict[str, Any]:
    """Skip job ``name``'s run at ``current_time`` and run it at ``new_time`` instead (both in
    ``time_fmt``, default ``%Y-%m-%dT%H:%M:%S``)."""
    missing = {"time": "Job current time is required.", "new_time": "Job new_time is required."}
    times = {"time": current_time, "new_time": new_time}
    return dict(_change_runs("postpone_job", name, times, missing, kwargs.get("time_fmt") or TIME_FMT))


def skip_job(name: str, current_time: str, **kwargs: Any) -> dict[str, Any]:
    """Skip job ``name``'s run at ``current_time`` (in ``time_fmt``, default ``%Y-%m-%dT%H:%M:%S``)."""
    missing = {"time": "Job time is required."}
    return dict(_change_runs("skip_job", name, {"time": current_time}, missing, kwargs.get("time_fmt") or TIME_FMT))


def show_next_fire_time(name: str, **kwargs: Any) -> dict[str, Any]:
    """When job ``name`` runs next: ``{"result": True, "next_fire_time": "%Y-%m-%dT%H:%M:%S"}``
    (None for a job that does not exist or runs no more)."""
    if not name:
        return {"comment": "Job name is required.", "result": False}
    reply = _ask("next_fire_time", {"name": name})
    if not isinstance(reply, dict):
        return {"comment": "Event module not available. Schedule show next fire time failed.", "result": True}
    if "next_fire_time" in reply:
        return {"result": True, "next_fire_time": reply["next_fire_time"]}
    return {"result": True, "comment": "next fire time not available."}


def _publish(word: str, name: str, target: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``copy`` / ``move``: Salt publishes ``schedule.add`` to the targets through the master's
    peer interface; briny has none, so the answer names the call to run instead."""
    if not name:
        return {"comment": "Job name is required.", "result": False}
    if _test(kwargs):
        return {"comment": f"Job: {name} would be {word} from schedule.", "result": True}
    current = list_(show_all=True, where="opts", return_yaml=False)
    pillar = list_(show_all=True, where="pillar", return_yaml=False)
    job = current.get(name) or pillar.get(name)
    if not isinstance(job, dict):
        return {"comment": f"Job {name} does not exist.", "result": False}
    options = " ".join(f"{key}={value}" for key, value in job.items() if key != "name")
    return {
        "comment": (
            f"schedule.{'copy' if word == 'copied' else 'move'} needs Salt's peer publishing (publish.publish), "
            f"which briny does not have; run on {target}: schedule.add {name} {options}"
        ),
        "result": False,
    }


def copy(name: str, target: Any, **kwargs: Any) -> dict[str, Any]:
    """Copy job ``name`` to the minions ``target`` (refused: see the module docstring)."""
    return _publish("copied", name, target, kwargs)


def move(name: str, target: Any, **kwargs: Any) -> dict[str, Any]:
    """Move job ``name`` to the minions ``target`` (refused: see the module docstring)."""
    return _publish("moved", name, target, kwargs)


def enable(**kwargs: Any) -> dict[str, Any]:
    """Run the schedule's jobs (after :func:`disable`)."""
    if _test(kwargs):
        return {"comment": "Schedule would be enabled.", "changes": {}, "result": True}
    return _answer("enable", {}, "enable job")


def disable(**kwargs: Any) -> dict[str, Any]:
    """Run none of the schedule's jobs until :func:`enable`."""
    if _test(kwargs):
        return {"comment": "Schedule would be disabled.", "changes": {}, "result": True}
    return _answer("disable", {}, "disable job")


def enable_job(name: str, **kwargs: Any) -> dict[str, Any]:
    """Run job ``name`` again (after :func:`disable_job`); test mode from the config (as Salt)."""
    if __opts__.get("test"):
        return {"comment": f"Job: {name} would be enabled in schedule.", "result": True, "changes": {}}
    if not _exists(name):
        return {"comment": f"Job {name} does not exist.", "result": False, "changes": {}}
    return _answer("enable_job", {"name": name}, "enable job")


def disable_job(name: str, **kwargs: Any) -> dict[str, Any]:
    """Keep job ``name`` and run it no more (until :func:`enable_job`)."""
    if _test(kwargs):
        return {"comment": f"Job: {name} would be disabled in schedule.", "result": True, "changes": {}}
    if not _exists(name):
        return {"comment": f"Job {name} does not exist.", "result": False, "changes": {}}
    return _answer("disable_job", {"name": name}, "enable job")


def run_job(name: str, force: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Run job ``name`` now (its regular runs go on); a disabled job only with ``force=True``."""
    return _answer("run_job", {"name": name, "force": bool(force)}, "run job")


def save(**kwargs: Any) -> dict[str, Any]:
    """Write the entries not from pillar to ``<config dir>/minion.d/_schedule.conf``."""
    if _test(kwargs):
        return {"comment": "Schedule would be saved.", "result": True}
    return _answer("save", {}, "save")


def reload_() -> dict[str, Any]:
    """Read the saved entries back from ``<config dir>/minion.d/_schedule.conf``."""
    return _answer("reload", {}, "reload")
