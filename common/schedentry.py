"""One entry of a ``schedule:`` (the minion's and the master's), checked: :func:`parse_entry`.

An entry (Salt 3007's keys): ``function``; ``args`` (or ``job_args``); ``kwargs`` (or
``job_kwargs``); when it runs, one of: an interval (``seconds`` + ``minutes`` + ``hours`` +
``days``, summed, as Salt does), ``when`` (a date string or a list of them,
:mod:`briny.common.datestr`), ``cron`` (:mod:`briny.common.cron`) or ``once`` (a moment in
``once_fmt``, default ``%Y-%m-%dT%H:%M:%S``); ``splay`` (seconds, or ``{start, end}``: a random
delay added to each run); ``run_on_start``; ``maxrunning`` (default 1); ``enabled``; ``range``
(``{start, end[, invert]}``: runs only inside, or with ``invert`` only outside); ``after`` /
``until`` (no run before / after); ``skip_during_range`` (``{start, end}``: no run inside) with
``run_after_skip_range`` (one run when it ends, if one was skipped); ``run_explicit`` /
``skip_explicit`` (lists of ``{time, time_fmt}``: what ``schedule.postpone_job`` and
``schedule.skip_job`` add); ``jid_include`` and ``return_job`` (default True: the return goes to
the master's job cache). Salt's other options (:data:`UNSUPPORTED`) and unknown keys are named
in a warning and ignored.

An entry that cannot run is refused with a :class:`~briny.common.exceptions.ConfigError` naming it.
"""

from __future__ import annotations

import copy
import datetime as dt
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from briny.common import cron, datestr
from briny.common.exceptions import ConfigError

log = logging.getLogger(__name__)

UNITS = {"seconds": 1.0, "minutes": 60.0, "hours": 3600.0, "days": 86400.0}
CALENDAR = ("when", "cron", "once")
SUPPORTED = frozenset(
    {"function", "args", "job_args", "kwargs", "job_kwargs", "splay", "run_on_start", "maxrunning", "enabled"}
    | {"jid_include", "return_job", "name", "once_fmt", "range", "after", "until", "skip_during_range"}
    | {"run_after_skip_range", "run_explicit", "skip_explicit", "saved"}
    | set(UNITS)
    | set(CALENDAR)
)
UNSUPPORTED = frozenset(
    {"returner", "return_config", "return_kwargs", "metadata", "persist", "splay_start", "splay_end", "output"}
)
FLAGS = {"run_on_start": False, "enabled": True, "jid_include": True, "return_job": True, "run_after_skip_range": False}
TIME_FMT = "%Y-%m-%dT%H:%M:%S"


@dataclass(frozen=True)
class Range:
    """``range`` / ``skip_during_range``: from ``start`` to ``end`` (read on the day of the check)."""

    start: datestr.DateSpec
    end: datestr.DateSpec
    invert: bool = False

    def bounds(self, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
        return self.start.on(now), self.end.on(now)


@dataclass
class Entry:
    """One schedule entry, checked."""

    name: str
    function: str
    interval: float | None  # seconds; None for a ``when``/``cron``/``once`` entry
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    splay: tuple[float, float] | None = None
    run_on_start: bool = False
    maxrunning: int = 1
    enabled: bool = True
    jid_include: bool = True
    return_job: bool = True
    when: tuple[datestr.DateSpec, ...] = ()
    cron: cron.Cron | None = None
    once: dt.datetime | None = None
    range: Range | None = None
    after: datestr.DateSpec | None = None
    until: datestr.DateSpec | None = None
    skip_during_range: Range | None = None
    run_after_skip_range: bool = False
    run_explicit: list[dt.datetime] = field(default_factory=list)
    skip_explicit: list[dt.datetime] = field(default_factory=list)
    source: str = "config"  # "config", "pillar" (not saved), "added" or "daemon"
    raw: dict[str, Any] = field(default_factory=dict)  # the entry as given (schedule.list, save)

    @property
    def calendar(self) -> bool:
        """Runs at moments (``when``, ``cron``, ``once``) rather than at an interval."""
        return self.interval is None


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


def _date(name: str, key: str, value: Any) -> datestr.DateSpec:
    try:
        return datestr.parse(value)
    except ConfigError as exc:
        raise ConfigError(f"schedule entry {name!r}: {key!r}: {exc}") from None


def _range(name: str, key: str, value: Any, invertible: bool) -> Range:
    if not isinstance(value, Mapping) or "start" not in value or "end" not in value:
        raise ConfigError(f"schedule entry {name!r}: {key!r} must be a mapping with 'start' and 'end', not {value!r}")
    start, end = _date(name, f"{key} start", value["start"]), _date(name, f"{key} end", value["end"])
    if start.weekday is None and end.weekday is None:  # comparable whatever the day: check now
        day = dt.datetime(2000, 1, 3)
        if end.on(day) <= start.on(day):
            raise ConfigError(f"schedule entry {name!r}: {key!r}: the end must be later than the start")
    invert = _bool(name, f"{key} invert", value.get("invert"), False) if invertible else False
    return Range(start, end, invert)


def _times(name: str, key: str, value: Any) -> list[dt.datetime]:
    """``run_explicit`` / ``skip_explicit``: ``[{time, time_fmt}]`` (or date strings) as datetimes."""
    items = value if isinstance(value, list) else [value]
    out: list[dt.datetime] = []
    for item in items:
        if isinstance(item, Mapping):
            fmt = str(item.get("time_fmt") or TIME_FMT)
            try:
                out.append(dt.datetime.strptime(str(item.get("time")), fmt))
            except ValueError:
                raise ConfigError(f"schedule entry {name!r}: {key!r}: {item.get('time')!r} is not in {fmt!r}") from None
        else:
            spec = _date(name, key, item)
            if spec.at is None:
                raise ConfigError(f"schedule entry {name!r}: {key!r}: {item!r} names no date")
            out.append(spec.at)
    return sorted(out)


def _timing(name: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :class:`Entry` that say when it runs."""
    units = [key for key in UNITS if raw.get(key) is not None]
    calendar = [key for key in CALENDAR if raw.get(key) is not None]
    if len(calendar) > 1:
        raise ConfigError(f'schedule entry {name!r}: unable to use "when", "cron" and "once" together')
    if units and calendar:
        raise ConfigError(
            f'schedule entry {name!r}: unable to use "seconds", "minutes", "hours" or "days" with {calendar[0]!r}'
        )
    if units:
        interval = sum(_number(name, key, raw[key]) * UNITS[key] for key in units)
        if interval <= 0:
            raise ConfigError(f"schedule entry {name!r}: its interval must be more than 0 seconds")
        return {"interval": interval}
    if not calendar:
        raise ConfigError(
            f"schedule entry {name!r} has no timing: give seconds, minutes, hours, days, when, cron or once"
        )
    key = calendar[0]
    if key == "when":
        given = raw["when"] if isinstance(raw["when"], list) else [raw["when"]]
        if not given:
            raise ConfigError(f"schedule entry {name!r}: 'when' names no time")
        return {"interval": None, "when": tuple(_date(name, "when", item) for item in given)}
    if key == "cron":
        try:
            return {"interval": None, "cron": cron.parse(raw["cron"])}
        except ConfigError as exc:
            raise ConfigError(f"schedule entry {name!r}: {exc}") from None
    fmt = str(raw.get("once_fmt") or TIME_FMT)
    once = raw["once"]
    if isinstance(once, dt.datetime):
        return {"interval": None, "once": once}
    try:
        return {"interval": None, "once": dt.datetime.strptime(str(once), fmt)}
    except ValueError:
        raise ConfigError(f"schedule entry {name!r}: date string could not be parsed: {once!r}, {fmt!r}") from None


def _splay(name: str, given: Any) -> tuple[float, float] | None:
    if isinstance(given, Mapping):
        start, end = _number(name, "splay start", given.get("start", 0)), _number(name, "splay end", given.get("end"))
        if end < start:
            raise ConfigError(f"schedule entry {name!r}: splay 'end' must not be below 'start'")
        return (start, end)
    if given is not None and given is not False:
        return (0.0, _number(name, "splay", given))
    return None


def parse_entry(name: str, raw: Any, source: str = "config") -> Entry:
    """``raw`` (one entry of ``schedule:``) checked; ConfigError naming ``name`` when it cannot run."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"schedule entry {name!r} must be a mapping of options, not {raw!r}")
    function = raw.get("function")
    if not isinstance(function, str) or not function:
        raise ConfigError(f"schedule entry {name!r} names no 'function' to run")
    timing = _timing(name, raw)
    args = raw.get("args", raw.get("job_args", []))
    if args is None:
        args = []
    if not isinstance(args, (list, tuple)):
        args = [args]  # Salt takes one argument as is
    kwargs = raw.get("kwargs", raw.get("job_kwargs", {})) or {}
    if not isinstance(kwargs, Mapping):
        raise ConfigError(f"schedule entry {name!r}: 'kwargs' must be a mapping, not {kwargs!r}")
    most = raw.get("maxrunning", 1)
    if isinstance(most, bool) or not isinstance(most, int) or most < 1:
        raise ConfigError(f"schedule entry {name!r}: 'maxrunning' must be a whole number of 1 or more, not {most!r}")
    extra: dict[str, Any] = {}
    if raw.get("range") is not None:
        extra["range"] = _range(name, "range", raw["range"], True)
    if raw.get("skip_during_range") is not None:
        extra["skip_during_range"] = _range(name, "skip_during_range", raw["skip_during_range"], False)
    for key in ("after", "until"):
        if raw.get(key) is not None:
            extra[key] = _date(name, key, raw[key])
    for key in ("run_explicit", "skip_explicit"):
        if raw.get(key):
            extra[key] = _times(name, key, raw[key])
    ignored = sorted(key for key in raw if key in UNSUPPORTED)
    if ignored:
        log.warning("schedule entry %r: briny does not support %s; ignored", name, ", ".join(ignored))
    unknown = sorted(str(key) for key in raw if key not in SUPPORTED and key not in UNSUPPORTED)
    if unknown:
        log.warning("schedule entry %r: unknown option(s) %s; ignored", name, ", ".join(unknown))
    flags: dict[str, Any] = {key: _bool(name, key, raw.get(key), default) for key, default in FLAGS.items()}
    return Entry(
        name,
        function,
        args=list(args),
        kwargs=dict(kwargs),
        splay=_splay(name, raw.get("splay")),
        maxrunning=most,
        source=source,
        raw=copy.deepcopy(dict(raw)),
        **timing,
        **extra,
        **flags,
    )


def parse_global_range(value: Any) -> Range:
    """The schedule-wide ``skip_during_range`` (Salt's top-level key); ConfigError when bad."""
    return _range("skip_during_range", "skip_during_range", value, False)
