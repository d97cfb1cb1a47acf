"""``beacons.*`` on the running minion: each call's action on its :class:`~briny.minion.beacons.Beacons`.

The execution module (:mod:`briny.minion.host.modules.beacons`) sends ``(action, args)`` to the daemon
(``__job__.beacons``); the daemon answers with :func:`control` on its loop (pure: the beacons and
the call in, Salt 3007's answer out, ``{"result", "comment"[, "changes"]}``; ``list`` and
``list_available`` give the data). What Salt does, briny does:

- ``list`` merges the pillar's beacons and the config's (the config's win; ``include_pillar`` /
  ``include_opts`` leave either out); a top-level ``enabled`` shows once it was set;
- ``add`` / ``modify`` check the config with the beacon's own validation, ``delete`` /
  ``enable_beacon`` / ``disable_beacon`` refuse a beacon from pillar (change the pillar instead);
- ``save`` writes the beacons not from pillar to ``<config dir>/minion.d/beacons.conf``, which the
  minion reads at its next start with the rest of ``minion.d``; ``reset`` forgets every beacon not
  from pillar.
"""

from __future__ import annotations

import difflib
import logging
import os
from pathlib import Path
from typing import Any

import yaml

from briny.common.exceptions import BeaconInvalid
from briny.minion.beacons import BUILTIN, Beacons, module_of, parse_beacon

log = logging.getLogger(__name__)

SAVE_NAME = "beacons.conf"
ACTIONS = frozenset(
    {
        "list",
        "list_available",
        "add",
        "modify",
        "delete",
        "enable",
        "disable",
        "enable_beacon",
        "disable_beacon",
        "save",
        "reset",
    }
)


def save_path(opts: dict[str, Any]) -> Path:
    """``<config dir>/minion.d/beacons.conf`` (the config dir: ``conf_dir``, else the config file's)."""
    conf_dir = opts.get("conf_dir") or (os.path.dirname(str(opts["conf_file"])) if opts.get("conf_file") else "")
    return Path(str(conf_dir or "/etc/briny")) / "minion.d" / SAVE_NAME


def listing(beacons: Beacons, include_pillar: bool = True, include_opts: bool = True) -> dict[str, Any]:
    """The beacons as configured (``beacons.list``): name to its config as given."""
    out: dict[str, Any] = {}
    sources = ({"pillar"} if include_pillar else set()) | ({"config", "added"} if include_opts else set())
    for source in ("pillar", "config", "added"):  # the config's win over the pillar's
        if source in sources:
            out.update({name: b.raw for name, b in beacons.beacons.items() if b.source == source})
    if include_opts and beacons.enabled_set:
        out["enabled"] = beacons.enabled
    return out


def _lines(raw: Any) -> list[str]:
    items = raw if isinstance(raw, list) else [raw]
    return [f"{key}:{value}\n" for item in items if isinstance(item, dict) for key, value in item.items()]


def _set_enabled(raw: list[Any], on: bool) -> None:
    """The config as Salt 3007 leaves it: disabled, its ``enabled`` item set False (or appended);
    enabled again, that item gone (``beacons.list`` shows no ``enabled`` item then)."""
    if on:
        raw[:] = [item for item in raw if not (isinstance(item, dict) and set(item) == {"enabled"})]
        return
    for item in raw:
        if isinstance(item, dict) and "enabled" in item:
            item["enabled"] = False
            return
    raw.append({"enabled": False})


def _invalid(name: str, data: Any, verb: str) -> dict[str, Any] | None:
    """Salt's answer when ``data`` is not a config beacon ``name`` can run, else None."""
    module = module_of(name, data)
    if module not in BUILTIN:
        return {"comment": f'Beacon "{module}" is not available.', "result": False}
    try:
        parse_beacon(name, data, "added")
    except BeaconInvalid as exc:
        return {"comment": f"Beacon {name} configuration invalid, not {verb}.\n{exc.reason}", "result": False}
    return None


def control(beacons: Beacons, action: str, args: dict[str, Any], path: Path) -> Any:
    """Apply one ``beacons.<action>`` to ``beacons`` and give Salt's answer (loop)."""
    if action == "list":
        return listing(
            beacons, args.get("include_pillar", True) is not False, args.get("include_opts", True) is not False
        )
    if action == "list_available":
        return list(BUILTIN)
    if action in ("enable", "disable"):
        beacons.enabled, beacons.enabled_set = action == "enable", True
        word = "Enabled" if beacons.enabled else "Disabled"
        return {"comment": f"{word} beacons on minion.", "result": True}
    if action == "save":
        return _save(beacons, path)
    if action == "reset":
        for name in [n for n, b in beacons.beacons.items() if b.source != "pillar"]:
            beacons.remove(name)
        beacons.enabled, beacons.enabled_set = True, False
        return {"comment": "Beacon configuration reset.", "result": True}
    name = str(args.get("name") or "")
    if not name:
        return {"comment": "Beacon name is required.", "result": False}
    current = beacons.beacons.get(name)
    from_pillar = current is not None and current.source == "pillar"
    if action == "add":
        return _add(beacons, name, args.get("beacon_data"))
    if action == "modify":
        return _modify(beacons, name, args.get("beacon_data"))
    if action == "delete":
        if from_pillar:
            return {"comment": f"Cannot delete beacon item {name}, it is configured in pillar.", "result": False}
        beacons.remove(name)  # Salt says it is deleted when it was not there either
        return {"comment": f"Deleted beacon: {name}.", "result": True}
    if action in ("enable_beacon", "disable_beacon"):
        on = action == "enable_beacon"
        word = "enable" if on else "disable"
        if current is None:
            return {"comment": f"Beacon {name} is not currently configured.", "result": False}
        if from_pillar:
            return {"comment": f"Cannot {word} beacon item {name}, it is configured in pillar.", "result": False}
        current.enabled = on
        _set_enabled(current.raw, on)
        if on:
            beacons.put(current)  # due now, as a beacon just added
        return {"comment": f"{word.capitalize()}d beacon {name} on minion.", "result": True}
    return {"comment": f"beacons has no action {action!r}", "result": False}


def _add(beacons: Beacons, name: str, data: Any) -> dict[str, Any]:
    if name in listing(beacons):
        return {"comment": f"Beacon {name} is already configured.", "result": True}
    bad = _invalid(name, data, "adding")
    if bad is not None:
        return bad
    beacons.put(parse_beacon(name, data, "added"))
    log.info("beacon %r added", name)
    return {"comment": f"Added beacon: {name}.", "result": True}


def _modify(beacons: Beacons, name: str, data: Any) -> dict[str, Any]:
    current = beacons.beacons.get(name)
    if current is None:
        return {"comment": f"Beacon {name} is not configured.", "result": True}
    bad = _invalid(name, data, "modifying")
    if bad is not None:
        return bad
    if data == current.raw:
        return {"comment": f"Job {name} in correct state", "result": True}  # Salt's words
    if current.source == "pillar":
        return {"comment": f"Cannot modify beacon item {name}, it is configured in pillar.", "result": False}
    diff = "".join(difflib.unified_diff(_lines(current.raw), _lines(data)))
    beacons.put(parse_beacon(name, data, current.source))
    return {"comment": f"Modified beacon: {name}.", "result": True, "changes": {"diff": diff}}


def _save(beacons: Beacons, path: Path) -> dict[str, Any]:
    saved = listing(beacons, include_pillar=False)
    text = yaml.safe_dump({"beacons": saved}, default_flow_style=False) if saved else ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as exc:
        log.error("cannot save the beacons to %s: %s", path, exc)
        return {"comment": f"Unable to write to beacons file at {path}. Check permissions.", "result": False}
    return {"comment": f"Beacons saved to {path}.", "result": True}
