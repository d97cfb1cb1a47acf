"""``briny-run manage.*``: which minions answer, are connected, and run which version.

Runs in ``briny-run`` on the master host; needs the running master.

- ``status`` / ``up`` / ``down``: every accepted minion is pinged (``test.ping``
  through the master) and sorted by whether it returned within ``timeout``
  seconds (the master's ``timeout`` by default), as Salt's runner does.
- ``present`` / ``not_present``: no command is sent; the master's presence
  (a minion heard from within two ``ping_interval``) as Salt's presence
  detection. ``show_ip`` is not supported (a warning says so).
- ``versions``: ``test.version`` on every minion, sorted against the master's
  own version under Salt's labels (``Up to date``, ``Minion requires update``,
  ``Minion newer than master``, ``Minion offline``) plus ``Master``. briny
  compares briny's versions (what ``test.version`` reports: ``briny 0.1.0
  (Salt 3007.17)``); a minion answering something else (an older briny
  reporting only the Salt version) is ``Minion requires update``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from briny import __version__
from briny.common import versions as _versions
from briny.master.clientapi import MasterClient
from briny.master.keys.store import KeyStore
from briny.master.runners import RunnerContext

log = logging.getLogger(__name__)

__all__ = ["status", "up", "down", "present", "not_present", "versions"]

LABELS = {
    -2: "Minion offline",
    -1: "Minion requires update",
    0: "Up to date",
    1: "Minion newer than master",
}
_BRINY_VERSION = re.compile(r"\Abriny (\d+(?:\.\d+)*)")


def status(ctx: RunnerContext, timeout: float | None = None, **kwargs: Any) -> dict[str, list[str]]:
    """``{"up": [...], "down": [...]}`` over the accepted minions."""
    accepted = sorted(KeyStore(ctx.opts).accepted_ids())
    answered: set[str] = set()
    if accepted:
        _, returns = ctx.cmd(accepted, "test.ping", tgt_type="list", timeout=timeout)
        answered = set(returns)
    return {"up": sorted(answered), "down": [m for m in accepted if m not in answered]}


def up(ctx: RunnerContext, timeout: float | None = None, **kwargs: Any) -> list[str]:
    """The accepted minions that answer a ping."""
    return status(ctx, timeout)["up"]


def down(ctx: RunnerContext, timeout: float | None = None, **kwargs: Any) -> list[str]:
    """The accepted minions that do not answer a ping."""
    return status(ctx, timeout)["down"]


def _presence(ctx: RunnerContext, subset: Any, show_ip: bool) -> tuple[list[str], list[str]]:
    if show_ip:
        log.warning("manage: show_ip is not supported by briny (the master does not keep minion addresses); ignored")
    with MasterClient(ctx.opts) as client:
        known = client.minions()
    accepted = list(known.get("accepted") or [])
    connected = set(known.get("connected") or [])
    if subset is not None:
        wanted = set(subset.split(",") if isinstance(subset, str) else (str(s) for s in subset))
        accepted = [m for m in accepted if m in wanted]
    return sorted(m for m in accepted if m in connected), sorted(m for m in accepted if m not in connected)


def present(ctx: RunnerContext, subset: Any = None, show_ip: bool = False, **kwargs: Any) -> list[str]:
    """The accepted minions the master is connected to (no command is sent), as Salt's presence."""
    return _presence(ctx, subset, show_ip)[0]


def not_present(ctx: RunnerContext, subset: Any = None, show_ip: bool = False, **kwargs: Any) -> list[str]:
    """The accepted minions the master is not connected to (no command is sent)."""
    return _presence(ctx, subset, show_ip)[1]


def _parse(text: Any) -> tuple[int, ...] | None:
    match = _BRINY_VERSION.match(str(text))
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def compare(minion_version: Any, master_version: str = __version__) -> int:
    """Salt's label key of one minion's ``test.version`` answer against the master's version."""
    mine = _parse(minion_version)
    if mine is None:
        return -1
    master = tuple(int(p) for p in master_version.split("."))
    return (mine > master) - (mine < master)


def versions(ctx: RunnerContext, timeout: float | None = None, **kwargs: Any) -> dict[str, Any]:
    """Each minion's ``test.version`` under Salt's labels, and the master's own under ``Master``."""
    targeted, returns = ctx.cmd("*", "test.version", timeout=timeout)
    grouped: dict[int, dict[str, Any]] = {}
    for minion in targeted:
        data = returns.get(minion)
        if not data or data.get("retcode"):
            grouped.setdefault(-2, {})[minion] = False
            continue
        answer = data.get("return")
        grouped.setdefault(compare(answer), {})[minion] = answer
    out: dict[str, Any] = {LABELS[key]: dict(sorted(grouped[key].items())) for key in grouped}
    out["Master"] = _versions.version_string("briny")
    return out
