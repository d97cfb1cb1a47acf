"""A masterless minion's reactor: events on the minion's own bus start ``caller.<fun>`` reactions.

Salt 3007 runs the reactor on a masterless minion (``master_type: disable``, ``file_client:
local``, the ``reactor`` engine); briny's masterless daemon (:mod:`briny.minion.agent`) starts it
when ``reactor:`` is in the minion config. The reactor itself (the map, rendering, ordering,
outcome and error events, the bounded queue) is :mod:`briny.common.reactor` on the ``minion`` bus,
so it sees what this host fires: beacons, the schedule's jobs, ``event.send`` / ``event.fire``.

Reactor SLS render from this minion's ``file_roots`` with its own execution functions (as a
masterless state run renders), and each ``caller.<fun>`` runs through the daemon's
:class:`~briny.minion.executor.Executor` in a reactor worker thread: the minion's loader, grains,
pillar and job context (``schedule.*``, ``beacons.*``), as ``briny-call`` runs a function. The
outcome (``salt/reactor/ret``) carries the function's ``return``; a failed state run is ``result:
False`` with its results, a call that raised ``result: False`` with its ``error``. ``local.*``, ``runner.*`` and ``wheel.*`` need a master: a reactor SLS
naming one is reported (``salt/reactor/error``) and the others run; so is a function this minion
does not have.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import ReactionError
from briny.common.jid import gen_jid
from briny.common.reactions import Reaction
from briny.common.reactor import Fire, Reactor, ReactorService

if TYPE_CHECKING:
    from briny.common.fileclient import LocalFileClient
    from briny.minion.executor import Executor

log = logging.getLogger(__name__)

BUS = "minion"


class CallerReactions:
    """Runs ``caller.<fun>`` reactions through a minion's executor (reactor worker threads)."""

    def __init__(self, executor: "Executor") -> None:
        self.executor = executor

    def check(self, kind: str, fun: str, rid: str) -> None:
        if kind != "caller":
            raise ReactionError(
                f"Reactor '{rid}': {kind}.{fun} needs a master; a masterless minion's reactor runs "
                f"caller.<function> (caller.{fun})"
            )

    def accepted(self, kind: str, fun: str, extra: dict[str, Any]) -> dict[str, Any]:
        return {}  # the legacy form's extra keys are a runner's or wheel's; never a caller's

    def run(self, reaction: Reaction) -> dict[str, Any]:
        from briny.minion.executor import Job

        job = Job(jid=gen_jid(), fun=reaction.fun, arg=list(reaction.args), kwarg=dict(reaction.kwargs))
        result = self.executor.run(job)
        if result.error == "not_found":
            raise ReactionError(f"caller.{reaction.fun}: {result.ret}")
        if result.error is not None:  # the call raised or was refused: its message
            return {"result": False, "return": result.ret, "error": str(result.ret)}
        return {"result": bool(result.success), "return": result.ret}  # a failed state run: its results


def render_env(executor: "Executor", files: "LocalFileClient") -> Any:
    """The render env of reactor SLS on this minion: its loader, grains and pillar."""
    from briny.common import loader
    from briny.common.state.stages import RenderEnv

    opts = executor.opts
    grains = dict(executor.grains())
    pillar = executor.pillar.get(opts, grains, None)
    salt = loader.minion_mods({**opts, "grains": grains, "pillar": pillar}, grains, pillar, job=executor.job_context())
    return RenderEnv(opts=opts, client=files, salt=salt, grains=grains, pillar=pillar)


def minion_reactor(opts: dict[str, Any], executor: "Executor", fire: Fire) -> Reactor:
    """This minion's :class:`Reactor` (``fire``: onto its own bus)."""
    return Reactor(opts, fire, CallerReactions(executor), lambda files: render_env(executor, files))


def start(opts: dict[str, Any], executor: "Executor") -> ReactorService:
    """The reactor on this minion's bus, started (the bus runs already)."""
    return ReactorService(opts, lambda fire: minion_reactor(opts, executor, fire), BUS).start()
