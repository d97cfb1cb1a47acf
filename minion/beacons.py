"""The minion's beacons (Salt 3007's ``beacons:``): config and host readings in, events out (issue 12).

Pure logic: the host is read through a :class:`Host` the caller gives (the daemon's reads
``os.getloadavg``, the mount table, ``service.status`` and ``status.*``; tests give fixed
readings), and time through an injected clock, so nothing here depends on the machine.
:class:`Beacons` holds the checked beacons and their memory between runs (``onchangeonly``);
:meth:`Beacons.due` says which run now, :meth:`Beacons.run` gives the ``(tag, data)`` events of one
beacon, which the daemon (:mod:`briny.minion.beaconrunner`) sends to the master's bus.

Config, as Salt 3007: ``beacons: {<name>: [ {option: value}, ... ]}`` (a list of one-key maps,
merged). The built-ins briny has are those that need no extra package: ``load``, ``diskusage``,
``service`` and ``status``. Every beacon takes ``interval`` (seconds between runs; without it the
beacon runs every ``loop_interval``), ``enabled``, ``run_once`` and ``beacon_module`` (the
built-in to run under another name). A beacon whose config its validation refuses is named in an
error with Salt's message and not run; the others run. Salt's older dict form (``load: {averages:
...}``) is refused by these four beacons' validation in Salt 3007 too, with the same message.

Events are Salt's: tag ``salt/beacon/<minion id>/<beacon name>/`` (plus the beacon's own tag
suffix: the service name for ``service``, the time for ``status``), data the beacon's fields and
``id``.
"""

from __future__ import annotations

import copy
import datetime
import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from briny.common.exceptions import BeaconInvalid, CommandExecutionError, ConfigError

log = logging.getLogger(__name__)

BUILTIN = ("load", "diskusage", "service", "status")
# options the beacon framework takes out of a beacon's config before the beacon sees it
FRAMEWORK = frozenset({"interval", "enabled", "run_once", "beacon_module", "disable_during_state_run"})
AVERAGES = ("1m", "5m", "15m")
STATUS_DEFAULT = {"loadavg": ["all"], "cpustats": ["all"], "meminfo": ["all"], "vmstats": ["all"], "time": ["all"]}

Event = tuple[str, dict[str, Any]]


class Host(Protocol):
    """What beacons read from the host (injected: the daemon's real one, or a test's)."""

    def loadavg(self) -> tuple[float, float, float]: ...

    def mounts(self) -> list[tuple[str, float]]:
        """(mount point, percent used) of every mounted file system."""
        ...

    def service_running(self, name: str) -> bool: ...

    def status(self, fun: str) -> Any:
        """``status.<fun>()``; raises :class:`CommandExecutionError` when it cannot answer."""
        ...

    def path_exists(self, path: str) -> bool: ...


@dataclass
class Beacon:
    """One configured beacon, checked."""

    name: str
    module: str  # the built-in it runs (``beacon_module``, else its name)
    items: list[dict[str, Any]]  # the config as given, less the framework's options
    options: dict[str, Any]  # ``items`` merged into one map
    interval: float | None = None
    enabled: bool = True
    run_once: bool = False
    source: str = "config"  # "config", "pillar" or "added"
    raw: Any = None  # the config as given (beacons.list)
    memory: dict[str, Any] = field(default_factory=dict)  # what ``onchangeonly`` compares with


def merged(items: list[Any]) -> dict[str, Any]:
    """A list-form config as one map (later items win), as Salt's ``list_to_dict``."""
    out: dict[str, Any] = {}
    for item in items:
        if isinstance(item, Mapping):
            out.update(item)
    return out


# -- validation: (ok, message), Salt's messages ------------------------------------------------


def _validate_load(items: list[Any]) -> tuple[bool, str]:
    options = merged(items)
    for flag in ("emitatstartup", "onchangeonly"):
        if flag in options and not isinstance(options[flag], bool):
            return False, f"Configuration for load beacon option {flag} must be a boolean."
    if "averages" not in options:
        return False, "Averages configuration is required for load beacon."
    averages = options["averages"]
    if not isinstance(averages, Mapping) or not any(key in averages for key in AVERAGES):
        return False, "Averages configuration for load beacon must contain 1m, 5m or 15m items."
    for key in AVERAGES:
        if key not in averages:
            continue
        pair = averages[key]
        if not isinstance(pair, list):
            return False, "Averages configuration for load beacon: 1m, 5m and 15m items must be a list of two items."
        if len(pair) != 2:
            return False, "Configuration for load beacon: 1m, 5m and 15m items must be a list of two items."
        if not all(_is_number(value) for value in pair):
            return False, f"Averages configuration for load beacon: {key} bounds must be numbers, not {pair!r}."
    return True, "Valid beacon configuration"


def _threshold(value: Any) -> float | None:
    text = str(value).strip().rstrip("%") if not isinstance(value, bool) else ""
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _validate_diskusage(items: list[Any]) -> tuple[bool, str]:
    for item in items:
        if not isinstance(item, Mapping) or len(item) != 1:
            return False, f"Configuration for diskusage beacon: each item must be one 'mount: percent', not {item!r}."
        mount, value = next(iter(item.items()))
        if _threshold(value) is None:
            return False, f"Configuration for diskusage beacon: {mount!r} needs a percentage, not {value!r}."
        try:
            re.compile(_mount_pattern(str(mount)))
        except re.error as exc:
            return False, f"Configuration for diskusage beacon: {mount!r} is not a valid regular expression ({exc})."
    return True, "Valid beacon configuration"


def _validate_service(items: list[Any]) -> tuple[bool, str]:
    options = merged(items)
    if "services" not in options:
        return False, "Configuration for service beacon requires services."
    services = options["services"]
    if not isinstance(services, Mapping):
        return False, "Services configuration item for service beacon must be a dictionary."
    for conf in services.values():
        if conf is not None and not isinstance(conf, Mapping):
            return False, "Configuration for service beacon must be a list of dictionaries."
    return True, "Valid beacon configuration"


def _validate_status(items: list[Any]) -> tuple[bool, str]:
    for item in items:
        if not isinstance(item, Mapping):
            return False, f"Configuration for status beacon: each item must be a map of status functions, not {item!r}."
    return True, "Valid beacon configuration"


VALIDATE: dict[str, Callable[[list[Any]], tuple[bool, str]]] = {
    "load": _validate_load,
    "diskusage": _validate_diskusage,
    "service": _validate_service,
    "status": _validate_status,
}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def module_of(name: str, raw: Any) -> str:
    """The built-in a beacon's config runs (its ``beacon_module``, else its name)."""
    items = raw if isinstance(raw, list) else [raw]
    found = [item["beacon_module"] for item in items if isinstance(item, Mapping) and "beacon_module" in item]
    return str(found[-1]) if found else name


def parse_beacon(name: str, raw: Any, source: str = "config") -> Beacon:
    """Check one beacon's config; a :class:`BeaconInvalid` naming the beacon when it cannot run."""
    if not isinstance(raw, list):
        raise BeaconInvalid(name, f"Configuration for {module_of(name, raw)} beacon must be a list.")
    if not all(isinstance(item, Mapping) for item in raw):
        raise BeaconInvalid(name, "each item of its list must be a map, as '- interval: 10'")
    framework = {key: value for item in raw for key, value in item.items() if key in FRAMEWORK}
    module = module_of(name, raw)
    if module not in VALIDATE:
        raise BeaconInvalid(name, f"the {module!r} beacon is not supported by briny (built-ins: {', '.join(BUILTIN)})")
    stripped = ({k: v for k, v in item.items() if k not in FRAMEWORK} for item in raw)
    items = [item for item in stripped if item]
    ok, message = VALIDATE[module](items)
    if not ok:
        raise BeaconInvalid(name, message)
    interval = framework.get("interval")
    if interval is not None and (not _is_number(interval) or interval <= 0):
        raise BeaconInvalid(name, f"'interval' must be a number of seconds above 0, not {interval!r}")
    for flag in ("enabled", "run_once"):
        if flag in framework and not isinstance(framework[flag], bool):
            raise BeaconInvalid(name, f"{flag!r} must be True or False, not {framework[flag]!r}")
    if framework.get("disable_during_state_run"):
        log.warning("beacon %r: 'disable_during_state_run' is not supported by briny; the beacon runs anyway", name)
    return Beacon(
        name=name,
        module=module,
        items=items,
        options=merged(items),
        interval=float(interval) if interval is not None else None,
        enabled=framework.get("enabled", True),
        run_once=framework.get("run_once", False),
        source=source,
        raw=copy.deepcopy(raw),
    )


# -- the beacons: options and readings in, event data out ---------------------------------------


def _load(beacon: Beacon, host: Host, now: float) -> list[dict[str, Any]]:
    options = beacon.options
    onchange = options.get("onchangeonly", False)
    readings = dict(zip(AVERAGES, host.loadavg()))
    last = beacon.memory.get("load")
    beacon.memory["load"] = readings
    if onchange and last is None:
        if not options.get("emitatstartup", True):
            return []
        last = readings
    fire = False
    for key, (low, high) in ((k, v) for k, v in options["averages"].items() if k in AVERAGES):
        value = readings[key]
        if onchange:
            assert last is not None
            fire = (value > high and last[key] < high) or (value < low and last[key] > low)
        else:
            fire = value < low or value > high
        if fire:
            break
    return [dict(readings)] if fire else []


def _mount_pattern(mount: str) -> str:
    return mount if mount.endswith("$") else mount + "$"


def _diskusage(beacon: Beacon, host: Host, now: float) -> list[dict[str, Any]]:
    mounts = host.mounts()
    out = []
    for item in beacon.items:
        mount, value = next(iter(item.items()))
        pattern, limit = re.compile(_mount_pattern(str(mount))), _threshold(value)
        assert limit is not None
        for point, percent in mounts:
            if pattern.match(point) and percent >= limit:
                out.append({"diskusage": percent, "mount": point})
    return out


def _service(beacon: Beacon, host: Host, now: float) -> list[dict[str, Any]]:
    out = []
    for service, conf in (beacon.options.get("services") or {}).items():
        conf = dict(conf or {})
        state: dict[str, Any] = {"running": bool(host.service_running(service))}
        if "uncleanshutdown" in conf and not state["running"]:
            state["uncleanshutdown"] = host.path_exists(str(conf["uncleanshutdown"]))
        event = {service: state, "service_name": service, "tag": service}
        if not conf.get("onchangeonly", False):
            out.append(event)
            continue
        delay = float(conf.get("delay", 0) or 0)
        last = beacon.memory.get(service)
        if last is None or last["running"] != state["running"]:
            first = last is None
            beacon.memory[service] = last = dict(state)
            if first and not conf.get("emitatstartup", True):
                continue
            if delay > 0:
                last["time"] = now
            else:
                out.append(event)
                continue
        if "time" in last and round(now - last["time"]) > delay:
            del last["time"]
            out.append(event)
    return out


def _status(beacon: Beacon, host: Host, now: float) -> list[dict[str, Any]]:
    items = [item for item in beacon.items if not any(str(key).startswith("_") for key in item)] or [STATUS_DEFAULT]
    data: dict[str, Any] = {}
    for item in items:
        for fun, wanted in item.items():
            data[fun] = {}
            try:
                answer = host.status(str(fun))
            except CommandExecutionError as exc:
                log.debug("status beacon: status.%s did not answer: %s", fun, exc)
                continue
            for key in wanted if isinstance(wanted, list) else [wanted]:
                if key == "all":
                    data[fun] = answer
                    continue
                try:
                    data[fun][key] = answer[key] if not isinstance(answer, list) else answer[int(key)]
                except (KeyError, IndexError, ValueError, TypeError) as exc:
                    data[fun] = f"Status beacon is incorrectly configured: {exc}"
    stamp = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None).isoformat()
    return [{"tag": stamp, "data": data}]


RUN: dict[str, Callable[[Beacon, Host, float], list[dict[str, Any]]]] = {
    "load": _load,
    "diskusage": _diskusage,
    "service": _service,
    "status": _status,
}


def events(minion_id: str, name: str, found: list[dict[str, Any]]) -> list[Event]:
    """Salt's events for what beacon ``name`` found: ``salt/beacon/<id>/<name>/`` (plus the
    item's ``tag``), the item as data, with ``id``."""
    out = []
    for item in found:
        data = dict(item)
        tag = f"salt/beacon/{minion_id}/{name}/" + str(data.pop("tag", ""))
        data.setdefault("id", minion_id)
        out.append((tag, data))
    return out


# -- the set of beacons ------------------------------------------------------------------------


class Beacons:
    """A minion's beacons, when each is due, and what each run fires."""

    def __init__(self, minion_id: str, loop_interval: float, clock: Callable[[], float]) -> None:
        self.id = minion_id
        self.loop_interval = loop_interval
        self.clock = clock
        self.beacons: dict[str, Beacon] = {}
        self.enabled = True
        self.enabled_set = False  # ``enabled`` given (config, beacons.enable/disable): beacons.list shows it
        self.refused: dict[str, str] = {}  # name: why (for beacons.list and tests)
        self._next: dict[str, float] = {}

    def load(self, config: Any, source: str) -> None:
        """Put the beacons of a ``beacons:`` mapping (replacing those of the same ``source``);
        each refused one is logged with its reason, the others are kept."""
        if config is None:
            config = {}
        if not isinstance(config, Mapping):
            log.error(
                "'beacons' (%s) must be a mapping of beacon names, not %r; no beacon from it runs", source, config
            )
            config = {}
        for name in [n for n, b in self.beacons.items() if b.source == source]:
            self.remove(name)
        for name in [n for n in self.refused if n.startswith(source + ":")]:
            del self.refused[name]
        if source == "config" and "enabled" in config:
            self.enabled = bool(config["enabled"])
            self.enabled_set = True
        for name, raw in config.items():
            if name == "enabled":
                continue
            try:
                beacon = parse_beacon(str(name), raw, source)
            except ConfigError as exc:  # unsupported: a warning (as other unsupported keys); invalid: an error
                level = logging.WARNING if module_of(str(name), raw) not in VALIDATE else logging.ERROR
                log.log(level, "%s (the beacon does not run)", exc)
                self.refused[f"{source}:{name}"] = str(exc)
                continue
            current = self.beacons.get(beacon.name)
            if current is not None and current.source == "config" and source == "pillar":
                continue  # Salt: the config's beacon wins over the pillar's of the same name
            self.put(beacon)

    def put(self, beacon: Beacon) -> None:
        self.beacons[beacon.name] = beacon
        first = 0.0 if beacon.interval is None else beacon.interval
        self._next[beacon.name] = self.clock() + first

    def remove(self, name: str) -> None:
        self.beacons.pop(name, None)
        self._next.pop(name, None)

    def due(self) -> list[Beacon]:
        """The beacons to run now (each then waits its interval, or ``loop_interval``)."""
        if not self.enabled:
            return []
        now = self.clock()
        out = []
        for name, beacon in self.beacons.items():
            if beacon.enabled and self._next.get(name, 0.0) <= now:
                out.append(beacon)
                step = beacon.interval or self.loop_interval
                self._next[name] = max(self._next[name] + step, now)
        return out

    def seconds_to_next(self) -> float:
        """How long until a beacon is due (``loop_interval`` when none is)."""
        times = [self._next[n] for n, b in self.beacons.items() if b.enabled and n in self._next]
        if not self.enabled or not times:
            return self.loop_interval
        return max(0.0, min(times) - self.clock())

    def run(self, beacon: Beacon, host: Host, now: float) -> list[Event]:
        """The events of one run of ``beacon`` (``now``: wall-clock seconds). A reading that
        fails gives Salt's error event (empty data) and a log line; ``run_once`` disables it."""
        try:
            found = RUN[beacon.module](beacon, host, now)
        except Exception as exc:  # a host reading failed: Salt's error event, the others go on
            log.error("Unable to start %s beacon, %s", beacon.name, exc, exc_info=True)
            return [(f"salt/beacon/{self.id}/{beacon.name}/", {})]
        if beacon.run_once:
            beacon.enabled = False
        return events(self.id, beacon.name, found)
