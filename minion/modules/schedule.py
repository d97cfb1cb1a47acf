"""The ``schedule`` execution module: the running minion's schedule (Salt 3007's ``schedule.*``).

Each call asks the minion daemon (``__job__.schedule``), which owns the schedule
(:mod:`briny.common.schedule`) and answers with :func:`briny.minion.schedulectl.control`.
Without a daemon (``briny-call --local``) there is no running schedule: ``list`` shows an empty
one (``offline=True``: the saved file), the others say so, as Salt's local calls do.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import ConfigError
from briny.common.yamlout import safe_dump

if TYPE_CHECKING:
    from briny.common.dunders import __job__, __opts__

log = logging.getLogger(__name__)

__func_alias__ = {"list_": "list", "reload_": "reload"}

NO_DAEMON = "Event module not available. Schedule {} failed."


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


def list_(show_all: bool = False, show_disabled: bool = True, return_yaml: bool = True, **kwargs: Any) -> Any:
    """The jobs scheduled on this minion: Salt's YAML text (``schedule: {...}``), or the mapping
    with ``return_yaml=False``. ``offline=True`` reads the saved file instead of the daemon."""
    if kwargs.get("offline"):  # Salt's ``where`` (pillar or config) is accepted and not used
        from briny.minion.schedulectl import read_saved, save_path

        try:
            schedule = read_saved(save_path(__opts__))
        except ConfigError as exc:
            return {"result": False, "comment": str(exc)}
    else:
        schedule = _ask("list", {"show_all": show_all, "show_disabled": show_disabled})
        if not isinstance(schedule, dict):
            schedule = {}
    if not return_yaml:
        return schedule
    return safe_dump({"schedule": schedule}, default_flow_style=False if schedule else None)


def add(name: str, **kwargs: Any) -> dict[str, Any]:
    """Add job ``name`` (``function``, ``seconds``/``minutes``/``hours``/``days``, ``job_args``, ...)."""
    return _answer("add", {**kwargs, "name": name}, "add")


def delete(name: str, **kwargs: Any) -> dict[str, Any]:
    """Remove job ``name``."""
    return _answer("delete", {"name": name}, "delete")


def modify(name: str, **kwargs: Any) -> dict[str, Any]:
    """Replace job ``name``'s options by those given."""
    return _answer("modify", {**kwargs, "name": name}, "modify")


def enable(**kwargs: Any) -> dict[str, Any]:
    """Run the schedule's jobs (after :func:`disable`)."""
    return _answer("enable", {}, "enable")


def disable(**kwargs: Any) -> dict[str, Any]:
    """Run none of the schedule's jobs until :func:`enable`."""
    return _answer("disable", {}, "disable")


def enable_job(name: str, **kwargs: Any) -> dict[str, Any]:
    return _answer("enable_job", {"name": name}, "enable job")


def disable_job(name: str, **kwargs: Any) -> dict[str, Any]:
    return _answer("disable_job", {"name": name}, "disable job")


def run_job(name: str, force: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Run job ``name`` now (its regular runs go on)."""
    return _answer("run_job", {"name": name}, "run job")


def save(**kwargs: Any) -> dict[str, Any]:
    """Write the entries not from pillar to ``<config dir>/minion.d/_schedule.conf``."""
    return _answer("save", {}, "save")


def reload_() -> dict[str, Any]:
    """Read the saved entries back from ``<config dir>/minion.d/_schedule.conf``."""
    return _answer("reload", {}, "reload")
