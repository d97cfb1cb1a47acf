"""A ``schedule:`` running on time (the minion's and the master's): entries in, jobs due out.

Pure logic with injected clocks, so tests drive time themselves: ``clock()`` (seconds, monotonic
in the daemons) times the interval entries; ``wall()`` (epoch seconds, ``time.time``) the
``when``/``cron``/``once`` entries and the date checks (``range``, ``after``, ``until``,
``skip_during_range``, ``run_explicit``/``skip_explicit``), read in local time; ``uniform(a, b)``
draws ``splay``. A daemon asks :meth:`Schedule.due` for the entries to run now, runs each as a
job, and tells :meth:`Schedule.finished` when it ends; :meth:`Schedule.seconds_to_next` says how
long it may sleep. The entries are checked by :func:`briny.common.schedentry.parse_entry`.

As Salt's: a run that is due and falls outside ``range`` (inside with ``invert``), inside
``skip_during_range`` (the entry's, else the schedule's), before ``after`` or after ``until``, at a
``skip_explicit`` time, of a disabled entry or schedule, or while ``maxrunning`` runs of the entry
go on, is skipped (logged) and the entry's next run is set as if it ran; ``run_on_start``'s first
run is not checked against the dates. A ``run_explicit`` time runs the entry then, whatever its
timing (``schedule.postpone_job``). A ``when`` time or ``once`` moment already past when the
schedule starts is not run late. Runs missed while the daemon was busy make one run, not many.
"""

from __future__ import annotations

import copy
import datetime as dt
import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from briny.common.exceptions import ConfigError
from briny.common.schedentry import TIME_FMT, Entry, Range, parse_entry, parse_global_range

log = logging.getLogger(__name__)

# top-level keys of a schedule that are not entries (Salt's global switches)
GLOBAL_KEYS = frozenset({"enabled", "skip_function", "skip_during_range", "loop_interval", "splay"})
LOOP = 1.0  # seconds: an explicit time matches a run this close after it (Salt's loop_interval)
MAX_NAP = 60.0  # a calendar entry is checked again at least this often (the wall clock may jump)


class Schedule:
    """The entries of one daemon and when each runs next (see the module docstring)."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        uniform: Callable[[float, float], float] = random.uniform,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock
        self.uniform = uniform
        self.wall = wall
        self.entries: dict[str, Entry] = {}
        self.next_run: dict[str, float] = {}  # interval entries: clock() time
        self.next_wall: dict[str, float] = {}  # calendar entries and deferred runs: wall() time
        self.after_skip: dict[str, float] = {}  # run_after_skip_range: wall() time of the run
        self.running: dict[str, int] = {}
        self.enabled = True
        self.skip_range: Range | None = None  # the schedule's own skip_during_range
        self.problems: dict[str, str] = {}  # refused entries: name -> why
        self.forced: set[str] = set()  # run_job: run at the next due(), whatever the next run time
        self.starting: set[str] = set()  # run_on_start: the first run, not checked against dates

    # -- loading ----------------------------------------------------------------------------------
    def load(self, schedule: Any, source: str = "config") -> dict[str, str]:
        """Replace the entries of ``source`` by those of ``schedule`` (a ``schedule:`` mapping);
        each refused entry is logged and left out. The refused entries, by name."""
        for name in [n for n, e in self.entries.items() if e.source == source]:
            self.drop(name)
        refused: dict[str, str] = {}
        if schedule is None:
            return refused
        if not isinstance(schedule, Mapping):
            log.error("the %s schedule must be a mapping of entries, not %r; ignored", source, schedule)
            return {"": f"the {source} schedule must be a mapping of entries"}
        for name, raw in schedule.items():
            name = str(name)
            try:
                if name in GLOBAL_KEYS and not (isinstance(raw, Mapping) and "function" in raw):
                    self._global(name, raw)
                    continue
                self.put(parse_entry(name, raw, source))
            except ConfigError as exc:
                log.error("%s; the entry is not scheduled", exc)
                refused[name] = str(exc)
        self.problems.update(refused)
        return refused

    def _global(self, name: str, raw: Any) -> None:
        if name == "enabled":
            self.enabled = raw is not False
        elif name == "skip_during_range":
            self.skip_range = parse_global_range(raw) if raw else None
        elif raw is not None:
            log.warning("schedule: the global option %r is not supported by briny; ignored", name)

    def put(self, entry: Entry) -> None:
        """Add or replace ``entry``; its first run is now with ``run_on_start``, else after one
        interval (at its next moment for a calendar entry)."""
        self.drop(entry.name)
        self.entries[entry.name] = entry
        self.problems.pop(entry.name, None)
        if entry.run_on_start:
            self.starting.add(entry.name)
        if entry.interval is None:
            self._plan_calendar(entry, self.wall() - 0.001)  # a moment that is now still runs
        else:
            self.next_run[entry.name] = self.clock() + entry.interval + self._splay(entry)

    def drop(self, name: str) -> None:
        """Forget ``name`` and its timing (``schedule.delete``)."""
        self.entries.pop(name, None)
        for table in (self.next_run, self.next_wall, self.after_skip):
            table.pop(name, None)
        self.forced.discard(name)
        self.starting.discard(name)

    def _splay(self, entry: Entry) -> float:
        if entry.splay is None:
            return 0.0
        return float(self.uniform(*entry.splay))

    def _plan_calendar(self, entry: Entry, after: float) -> None:
        """Set a calendar entry's next run: its first moment later than ``after`` (wall time)."""
        moment = next_moment(entry, dt.datetime.fromtimestamp(after))
        if moment is None:
            self.next_wall.pop(entry.name, None)
        else:
            self.next_wall[entry.name] = moment.timestamp() + self._splay(entry)

    # -- timing -----------------------------------------------------------------------------------
    def due(self) -> list[Entry]:
        """The entries to run now (each counted as running until :meth:`finished`); their next run
        is set on. A run is skipped (logged) as the module docstring says."""
        now, wall = self.clock(), self.wall()
        out: list[Entry] = []
        for name, entry in list(self.entries.items()):
            fired = self._fired(entry, now, wall)
            if fired is None:
                continue
            forced = name in self.forced or name in self.starting
            self.forced.discard(name)
            self.starting.discard(name)
            if not forced:
                if not self.enabled or not entry.enabled:
                    continue
                why = self._skip_reason(entry, fired)
                if why is not None:
                    log.info("schedule entry %r: this run is skipped (%s)", name, why)
                    continue
            if self.running.get(name, 0) >= entry.maxrunning:
                log.warning("schedule entry %r: maxrunning (%d) reached; this run is skipped", name, entry.maxrunning)
                continue
            self.started(name)
            out.append(entry)
        return out

    def _fired(self, entry: Entry, now: float, wall: float) -> float | None:
        """The wall time of the run of ``entry`` due now (its next run set on), None when none is."""
        name = entry.name
        fired: float | None = wall if name in self.forced or name in self.starting else None
        when = self.next_run.get(name)
        if when is not None and when <= now:
            later = when + (entry.interval or 0.0)
            fired = wall - (now - when)  # the run's own time (skip_job names it)
            if later <= now:  # runs were missed (the daemon was busy, the clock jumped): one run now
                later, fired = now + (entry.interval or 0.0), wall
            self.next_run[name] = later + self._splay(entry)
        moment = self.next_wall.get(name)
        if moment is not None and moment <= wall:
            self._plan_calendar(entry, max(wall, moment))
            fired = moment
        explicit = [t.timestamp() for t in entry.run_explicit]
        if any(t <= wall for t in explicit):
            entry.run_explicit[:] = [t for t in entry.run_explicit if t.timestamp() > wall]
            fired = wall
        deferred = self.after_skip.get(name)
        if deferred is not None and deferred <= wall:
            del self.after_skip[name]
            fired = wall
        return fired

    def _skip_reason(self, entry: Entry, fired: float) -> str | None:
        """Why the run of ``entry`` at ``fired`` (wall time) is skipped (None: it runs)."""
        at = dt.datetime.fromtimestamp(fired)
        if entry.range is not None:
            start, end = entry.range.bounds(at)
            inside = start <= at <= end
            if end <= start:
                return "its range ends before it starts"
            if inside == entry.range.invert:
                return "outside its range" if not entry.range.invert else "inside its inverted range"
        skip = entry.skip_during_range or self.skip_range
        if skip is not None:
            start, end = skip.bounds(at)
            if start <= at <= end:
                if entry.run_after_skip_range:
                    self.after_skip[entry.name] = end.timestamp() + LOOP
                return "inside skip_during_range"
        for moment in list(entry.skip_explicit):
            if _matches(moment, fired):
                entry.skip_explicit.remove(moment)
                return f"skip_explicit {moment.strftime(TIME_FMT)}"
            if moment.timestamp() + LOOP < fired:
                entry.skip_explicit.remove(moment)
        if entry.until is not None and entry.until.on(at) <= at:
            return "its 'until' time has passed"
        if entry.after is not None and entry.after.on(at) >= at:
            return "its 'after' time has not passed"
        return None

    def run_now(self, name: str) -> None:
        """Run ``name`` at the next :meth:`due` (``schedule.run_job``), keeping its next run time."""
        self.forced.add(name)

    def postpone(self, name: str, current: dt.datetime, new: dt.datetime) -> None:
        """``schedule.postpone_job``: skip the run at ``current``, run at ``new``."""
        entry = self.entries[name]
        entry.skip_explicit.append(current)
        entry.run_explicit.append(new)
        entry.raw.setdefault("skip_explicit", []).append({"time": current.strftime(TIME_FMT), "time_fmt": TIME_FMT})
        entry.raw.setdefault("run_explicit", []).append({"time": new.strftime(TIME_FMT), "time_fmt": TIME_FMT})

    def skip(self, name: str, moment: dt.datetime) -> None:
        """``schedule.skip_job``: skip the run at ``moment``."""
        entry = self.entries[name]
        entry.skip_explicit.append(moment)
        entry.raw.setdefault("skip_explicit", []).append({"time": moment.strftime(TIME_FMT), "time_fmt": TIME_FMT})

    def next_fire_time(self, name: str) -> dt.datetime | None:
        """When ``name`` runs next (local time), None when it is unknown or runs no more."""
        if name not in self.entries:
            return None
        entry = self.entries[name]
        candidates = [self.next_wall[name]] if name in self.next_wall else []
        if name in self.next_run:
            candidates.append(self.wall() + self.next_run[name] - self.clock())
        candidates = [c for c in candidates if not any(_matches(t, c) for t in entry.skip_explicit)]
        candidates += [t.timestamp() for t in entry.run_explicit]
        if name in self.after_skip:
            candidates.append(self.after_skip[name])
        return dt.datetime.fromtimestamp(min(candidates)) if candidates else None

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
        if self.forced or self.starting:
            return 0.0
        now, wall = self.clock(), self.wall()
        waits = [when - now for when in self.next_run.values()]
        moments = list(self.next_wall.values()) + list(self.after_skip.values())
        moments += [t.timestamp() for e in self.entries.values() for t in e.run_explicit]
        waits += [min(moment - wall, MAX_NAP) for moment in moments]
        if not waits:
            return None
        return max(0.0, min(waits))

    # -- views ------------------------------------------------------------------------------------
    def listing(self, show_all: bool = False, show_disabled: bool = True, where: str | None = None) -> dict[str, Any]:
        """The schedule as ``schedule.list`` shows it: each entry's options with Salt's defaults
        filled in (``enabled``, ``jid_include``, ``maxrunning``, ``name``); entries named ``__*``
        (the daemon's own) only with ``show_all``; ``where="pillar"``: only the pillar's entries,
        ``where="opts"``: only the others (Salt's ``where``)."""
        out: dict[str, Any] = {}
        for name, entry in self.entries.items():
            if where == "pillar" and entry.source != "pillar" or where == "opts" and entry.source == "pillar":
                continue
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


def _matches(moment: dt.datetime, fired: float) -> bool:
    """Whether a run at ``fired`` (wall time) is the one ``moment`` (a second's precision) names."""
    stamp = moment.timestamp()
    return stamp - LOOP / 2 <= fired <= stamp + LOOP


def next_moment(entry: Entry, after: dt.datetime) -> dt.datetime | None:
    """A calendar entry's first moment later than ``after`` (local time), None when it has no more."""
    if entry.cron is not None:
        return entry.cron.next_after(after)
    if entry.once is not None:
        return entry.once if entry.once > after else None
    moments = [spec.next_at_or_after(after + dt.timedelta(microseconds=1)) for spec in entry.when]
    found = [moment for moment in moments if moment is not None]
    return min(found) if found else None
