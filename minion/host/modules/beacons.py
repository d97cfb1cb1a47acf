"""The ``beacons`` execution module: the running minion's beacons (Salt 3007's ``beacons.*``).

Each call asks the minion daemon (``__job__.beacons``), which owns the beacons
(:mod:`briny.minion.beacons`) and answers with :func:`briny.minion.beaconctl.control`. A call run
outside the daemon (``briny-call --local``, ``file_client: local``) asks the minion daemon running
on this host over its local socket (:func:`briny.minion.localapi.daemon_control`), as Salt's
``salt-call --local`` reaches its running minion over the event bus. Without a daemon no beacon
runs: ``list`` shows none (Salt's ``beacons: null``), the others say so (Salt's "Event module not
available" answer). ``test=True`` says what would be done, as Salt's does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common.yamlout import safe_dump

if TYPE_CHECKING:
    from briny.common.dunders import __job__

__func_alias__ = {"list_": "list"}

NO_DAEMON = "Event module not available. Beacon {} failed."


def _ask(action: str, args: dict[str, Any]) -> Any:
    hook = __job__.beacons
    return hook(action, args) if callable(hook) else None


def _answer(action: str, args: dict[str, Any], word: str) -> dict[str, Any]:
    reply = _ask(action, args)
    if not isinstance(reply, dict):
        return {"result": False, "comment": NO_DAEMON.format(word)}
    return reply


def _test(kwargs: dict[str, Any]) -> bool:
    return bool(kwargs.get("test"))


def list_(return_yaml: bool = True, include_pillar: bool = True, include_opts: bool = True, **kwargs: Any) -> Any:
    """The beacons configured on this minion (config and pillar): Salt's YAML text (``beacons:
    {...}``), or the mapping with ``return_yaml=False``."""
    beacons = _ask("list", {"include_pillar": include_pillar, "include_opts": include_opts})
    if not isinstance(beacons, dict):
        beacons = None
    if not return_yaml:
        return beacons
    return safe_dump({"beacons": beacons}, default_flow_style=False)


def list_available(return_yaml: bool = True, **kwargs: Any) -> Any:
    """The beacons this minion can run (briny's built-ins)."""
    beacons = _ask("list_available", {})
    if not beacons:
        return {"beacons": {}}
    if not return_yaml:
        return beacons
    return safe_dump({"beacons": beacons}, default_flow_style=False)


def add(name: str, beacon_data: Any, **kwargs: Any) -> dict[str, Any]:
    """Add beacon ``name`` with its config (a list of one-key maps, as under ``beacons:``)."""
    if _test(kwargs):
        return {"comment": f"Beacon: {name} would be added.", "result": True}
    return _answer("add", {"name": name, "beacon_data": beacon_data}, "add")


def modify(name: str, beacon_data: Any, **kwargs: Any) -> dict[str, Any]:
    """Replace beacon ``name``'s config (``changes``: a diff of its items)."""
    if _test(kwargs):
        return {"comment": f"Beacon: {name} would be modified.", "result": True}
    return _answer("modify", {"name": name, "beacon_data": beacon_data}, "modify")


def delete(name: str, **kwargs: Any) -> dict[str, Any]:
    """Remove beacon ``name`` (not one from pillar)."""
    if _test(kwargs):
        return {"comment": f"Beacon: {name} would be deleted.", "result": True}
    return _answer("delete", {"name": name}, "delete")


def save(**kwargs: Any) -> dict[str, Any]:
    """Write the beacons not from pillar to ``<config dir>/minion.d/beacons.conf``."""
    return _answer("save", {}, "save")


def enable(**kwargs: Any) -> dict[str, Any]:
    """Run the beacons (after :func:`disable`)."""
    if _test(kwargs):
        return {"comment": "Beacons would be enabled.", "result": True}
    return _answer("enable", {}, "enable")


def disable(**kwargs: Any) -> dict[str, Any]:
    """Run no beacon until :func:`enable`."""
    if _test(kwargs):
        return {"comment": "Beacons would be disabled.", "result": True}
    return _answer("disable", {}, "disable")


def enable_beacon(name: str, **kwargs: Any) -> dict[str, Any]:
    """Run beacon ``name`` again (its config gets ``enabled: True``)."""
    if not name:
        return {"comment": "Beacon name is required.", "result": False}
    if _test(kwargs):
        return {"comment": f"Beacon {name} would be enabled.", "result": True}
    return _answer("enable_beacon", {"name": name}, "enable_beacon")


def disable_beacon(name: str, **kwargs: Any) -> dict[str, Any]:
    """Stop running beacon ``name`` (its config gets ``enabled: False``)."""
    if not name:
        return {"comment": "Beacon name is required.", "result": False}
    if _test(kwargs):
        return {"comment": f"Beacon {name} would be disabled.", "result": True}
    return _answer("disable_beacon", {"name": name}, "disable_beacon")


def reset(**kwargs: Any) -> dict[str, Any]:
    """Forget every beacon not from pillar."""
    if _test(kwargs):
        return {"comment": "Beacons would be reset.", "result": True}
    return _answer("reset", {}, "reset")
