"""The master's reactor: events on the master's bus start ``local``, ``runner`` and ``wheel`` reactions.

Runs in the master daemon (:class:`briny.common.reactor.ReactorService` on the ``master`` bus:
its listener and worker threads). The reactor itself (``reactor:``, rendering, ordering, the
outcome and error events, the bounded queue) is :mod:`briny.common.reactor`, shared with a
masterless minion's (:mod:`briny.minion.reactor`); here are the master's parts: reactor SLS render
with the master's guarded functions (as pillar does), and :class:`briny.master.reactions.Reactions`
runs each reaction (``caller.*`` is refused: Salt runs it on a masterless minion's reactor).
"""

from __future__ import annotations

from typing import Any

from briny.common.fileclient import LocalFileClient
from briny.common.reactor import Fire, Reactor, ReactorMap, ReactorService, normalize
from briny.master.reactions import Reactions

__all__ = ["Reactor", "ReactorMap", "ReactorService", "master_reactor", "normalize", "start"]


def render_env(opts: dict[str, Any], files: LocalFileClient) -> Any:
    """The render env of reactor SLS on the master: its guarded functions, as pillar renders."""
    from briny.common.state.hostview import HostBoundary, OptsView
    from briny.common.state.stages import RenderEnv
    from briny.master.pillar import ALLOWED, PY_HINT, is_pure, master_side_mods

    boundary = HostBoundary(str(opts.get("id") or "master"), "the reactor", is_pure, ALLOWED, code_hint=PY_HINT)
    salt = master_side_mods(OptsView(opts), {}, {}, boundary, files)
    return RenderEnv(opts=opts, client=files, salt=salt, boundary=boundary)


def master_reactor(opts: dict[str, Any], fire: Fire, reactions: Reactions | None = None) -> Reactor:
    """The master's :class:`Reactor` (``fire``: onto the master's bus)."""
    return Reactor(opts, fire, reactions or Reactions(opts), lambda files: render_env(opts, files))


def start(opts: dict[str, Any]) -> ReactorService:
    """The reactor on the master's bus, started."""
    return ReactorService(opts, lambda fire: master_reactor(opts, fire), "master").start()
