"""The minion's schedule (Salt's ``schedule:``): entries in, jobs due out (issue 12).

Pure logic with an injected clock (``clock()``: seconds, monotonic in the daemon) and random
source (``uniform(a, b)``, for ``splay``), so tests drive time themselves. The daemon
(:meth:`briny.minion.agent.MinionAgent._schedule_timer`) asks :meth:`Schedule.due` for the entries
to run now, runs each as a job, and tells :meth:`Schedule.finished` when it ends;
:meth:`Schedule.seconds_to_next` says how long it may sleep. ``schedule.*`` execution functions
reach the daemon's :class:`Schedule` through :meth:`Schedule.control`.

An entry (Salt 3007's keys): ``function``; ``args`` (or ``job_args``); ``kwargs`` (or
``job_kwargs``); an interval: ``seconds`` + ``minutes`` + ``hours`` + ``days`` (summed, as Salt
does); ``splay`` (seconds, or ``{start, end}``: a random delay added to each run);
``run_on_start`` (run as soon as the schedule starts, else after one interval); ``maxrunning``
(default 1: a run is skipped while that many of the entry's runs are going); ``enabled``;
``jid_include`` and ``return_job`` (default True: the return goes to the master's job cache).
Salt's other entry options (:data:`UNSUPPORTED`) are named in a warning and ignored.

An entry that cannot run (no function, an interval that is not a positive number, or none) is
refused with a :class:`~briny.common.exceptions.ConfigError` naming it; the other entries run.
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from briny.common.exceptions import ConfigError

log = logging.getLogger(__name__)

UNITS = {"seconds": 1.0, "minutes": 60.0, "hours": 3600.0, "days": 86400.0}
SUPPORTED = frozenset(
    {"function", "args", "job_args", "kwargs", "job_kwargs", "splay", "run_on_start", "maxrunning", "enabled"}
    | {"jid_include", "return_job", "name"}
    | set(UNITS)
)
UNSUPPORTED = frozenset(
    {"when", "cron", "once", "once_fmt", "range", "after", "until", "skip_during_range", "run_after_skip_range"}
    | {"returner", "return_config", "return_kwargs", "metadata", "run_explicit", "skip_explicit", "persist"}
    | {"splay_start", "splay_end", "output"}
)
FLAGS = {"run_on_start": False, "enabled": True, "jid_include": True, "return_job": True}  # and their defaults
# top-level keys of a schedule that are not entries (Salt's global switches)
GLOBAL_KEYS = frozenset({"enabled", "skip_function", "skip_during_range", "loop_interval"})


@dataclass
class Entry:
    """One schedule entry, checked."""

    name: str
    function: str
    interval: float
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    splay: tuple[float, float] | None = None
    run_on_start: bool = False
    maxrunning: int = 1
    enabled: bool = True
    jid_include: bool = True
    return_job: bool = True
    source: str = "config"  # "config", "pillar" (not saved) or "added"
    raw: dict[str, Any] = field(default_factory=dict)  # the entry as given (schedule.list, save)


def _bool(name: str, key: str, value: Any, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"schedule entry {name!r}: {key!r} must be True or False, not {value!r}")
    return value


def _number(name: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ConfigError(f"schedule entry {name!r}: {key!r} must be a number, not {value!r}")
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"schedule entry {name!r}: {key!r} must be a number, not {value!r}") from None
    if number < 0 or number != number:
        raise ConfigError(f"schedule entry {name!r}: {key!r} must be 0 or more, not {value!r}")
    return number


def parse_entry(name: str, raw: Any, source: str = "config") -> Entry:
    """``raw`` (one entry of ``schedule:``) checked; ConfigError naming ``name`` when it cannot run."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"schedule entry {name!r} must be a mapping of options, not {raw!r}")
    function = raw.get("function")
    if not isinstance(function, str) or not function:
        raise ConfigError(f"schedule entry {name!r} names no 'function' to run")
    units = [key for key in UNITS if raw.get(key) is not None]
    if not units:
        if any(raw.get(key) is not None for key in ("when", "cron", "once")):
            raise ConfigError(f"schedule entry {name!r}: 'when', 'cron' and 'once' are not supported yet")
        raise ConfigError(f"schedule entry {name!r} has no interval: give seconds, minutes, hours or days")
    interval = sum(_number(name, key, raw[key]) * UNITS[key] for key in units)
    if interval <= 0:
        raise ConfigError(f"schedule entry {name!r}: its interval must be more than 0 seconds")
    args = raw.get("args", raw.get("job_args", []))
    if args is None:
        args = []
    if not isinstance(args, (list, tuple)):
        args = [args]  # Salt takes one argument as is
    kwargs = raw.get("kwargs", raw.get("job_kwargs", {})) or {}
    if not isinstance(kwargs, Mapping):
        raise ConfigError(f"schedule entry {name!r}: 'kwargs' must be a mapping, not {kwargs!r}")
    splay: tuple[float, float] | None = None
    given = raw.get("splay")
    if isinstance(given, Mapping):
        start, end = _number(name, "splay start", given.get("start", 0)), _number(name, "splay end", given.get("end"))
        if end < start:
            raise ConfigError(f"schedule entry {name!r}: splay 'end' must not be below 'start'")
        splay = (start, end)
    elif given is not None and given is not False:
        splay = (0.0, _number(name, "splay", given))
    most = raw.get("maxrunning", 1)
    if isinstance(most, bool) or not isinstance(most, int) or most < 1:
        raise ConfigError(f"schedule entry {name!r}: 'maxrunning' must be a whole number of 1 or more, not {most!r}")
    ignored = sorted(key for key in raw if key in UNSUPPORTED)
    if ignored:
        log.warning("schedule entry %r: briny does not support %s yet; ignored", name, ", ".join(ignored))
    unknown = sorted(str(key) for key in raw if key not in SUPPORTED and key not in UNSUPPORTED)
    if unknown:
        log.warning("schedule entry %r: unknown option(s) %s; ignored", name, ", ".join(unknown))
    flags = {key: _bool(name, key, raw.get(key), default) for key, default in FLAGS.items()}
    raw = copy.deepcopy(dict(raw))
    return Entry(
        name, function, interval, list(args), dict(kwargs), splay, maxrunning=most, source=source, raw=raw, **flags
    )


class Schedule:
    """The entries of one minion and when each runs next (see the module docstring)."""

    def __init__(
        self,
        clock: Callable[[], float],
        uniform: Callable[[float, float], float] = random.uniform,
    ) -> None:
        self.clock = clock
        self.uniform = uniform
        self.entries: dict[str, Entry] = {}
        self.next_run: dict[str, float] = {}
        self.running: dict[str, int] = {}
        self.enabled = True
        self.problems: dict[str, str] = {}  # refused entries: name -> why
        self.forced: set[str] = set()  # run_job: run at the next due(), whatever the next run time

    # -- loading ----------------------------------------------------------------------------------
    def load(self, schedule: Any, source: str = "config") -> dict[str, str]:
        """Replace the entries of ``source`` by those of ``schedule`` (a ``schedule:`` mapping);
        each refused entry is logged and left out. The refused entries, by name."""
        for name in [n for n, e in self.entries.items() if e.source == source]:
            self._drop(name)
        refused: dict[str, str] = {}
        if schedule is None:
            return refused
        if not isinstance(schedule, Mapping):
            log.error("the %s schedule must be a mapping of entries, not %r; ignored", source, schedule)
            return {"": f"the {source} schedule must be a mapping of entries"}
        for name, raw in schedule.items():
            name = str(name)
            if name in GLOBAL_KEYS and not isinstance(raw, Mapping):
                if name == "enabled":
                    self.enabled = raw is not False
                continue
            try:
                self.put(parse_entry(name, raw, source))
            except ConfigError as exc:
                log.error("%s; the entry is not scheduled", exc)
                refused[name] = str(exc)
        self.problems.update(refused)
        return refused

    def put(self, entry: Entry) -> None:
        """Add or replace ``entry``; its first run is now with ``run_on_start``, else after one
        interval."""
        self.entries[entry.name] = entry
        self.problems.pop(entry.name, None)
        now = self.clock()
        self.next_run[entry.name] = now if entry.run_on_start else now + entry.interval + self._splay(entry)

    def _drop(self, name: str) -> None:
        self.entries.pop(name, None)
        self.next_run.pop(name, None)

    def _splay(self, entry: Entry) -> float:
        if entry.splay is None:
            return 0.0
        return float(self.uniform(*entry.splay))

    # -- timing -----------------------------------------------------------------------------------
    def due(self) -> list[Entry]:
        """The entries to run now (each counted as running until :meth:`finished`); their next run
        is set one interval on. A run is skipped (logged) while ``maxrunning`` of the entry's runs
        are going, or the entry or the schedule is disabled."""
        now = self.clock()
        out: list[Entry] = []
        for name, entry in list(self.entries.items()):
            when = self.next_run.get(name)
            if name in self.forced:
                self.forced.discard(name)
            elif when is None or when > now:
                continue
            else:
                later = when + entry.interval
                if later <= now:  # runs were missed (the daemon was busy, the clock jumped): one run now
                    later = now + entry.interval
                self.next_run[name] = later + self._splay(entry)
                if not self.enabled or not entry.enabled:
                    continue
            if self.running.get(name, 0) >= entry.maxrunning:
                log.warning("schedule entry %r: maxrunning (%d) reached; this run is skipped", name, entry.maxrunning)
                continue
            self.started(name)
            out.append(entry)
        return out

    def run_now(self, name: str) -> None:
        """Run ``name`` at the next :meth:`due` (``schedule.run_job``), keeping its next run time."""
        self.forced.add(name)

    def started(self, name: str) -> None:
        self.running[name] = self.running.get(name, 0) + 1

    def finished(self, name: str) -> None:
        """One run of ``name`` ended."""
        left = self.running.get(name, 0) - 1
        if left > 0:
            self.running[name] = left
        else:
            self.running.pop(name, None)

    def seconds_to_next(self) -> float | None:
        """Seconds until the next entry is due (0 when one is), or None with nothing to run."""
        if self.forced:
            return 0.0
        if not self.next_run:
            return None
        return max(0.0, min(self.next_run.values()) - self.clock())

    # -- views ------------------------------------------------------------------------------------
    def listing(self, show_all: bool = False, show_disabled: bool = True) -> dict[str, Any]:
        """The schedule as ``schedule.list`` shows it: each entry's options with Salt's defaults
        filled in (``enabled``, ``jid_include``, ``maxrunning``, ``name``); entries named ``__*``
        (the daemon's own) only with ``show_all``."""
        out: dict[str, Any] = {}
        for name, entry in self.entries.items():
            if name.startswith("__") and not show_all:
                continue
            if not entry.enabled and not show_disabled:
                continue
            item = copy.deepcopy(entry.raw)
            item.setdefault("enabled", entry.enabled)
            item.setdefault("jid_include", entry.jid_include)
            item.setdefault("maxrunning", entry.maxrunning)
            item["name"] = name
            out[name] = item
        if not self.enabled:
            out["enabled"] = False
        return out

    def saved(self) -> dict[str, Any]:
        """What ``schedule.save`` writes: the entries not from pillar nor the daemon's own."""
        out: dict[str, Any] = {
            name: {**copy.deepcopy(e.raw), "name": name}
            for name, e in self.entries.items()
            if e.source != "pillar" and not name.startswith("__")
        }
        if not self.enabled:
            out["enabled"] = False
        return out
