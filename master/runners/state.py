"""``briny-run state.event``: watch the master event bus.

Runs in ``briny-run`` on the master host; needs the running master (its
event bus in ``sock_dir``). Built on the public event API
(:class:`briny.common.event.EventListener`). Prints ``tag<TAB>json`` lines as
events arrive, as Salt's ``state.event`` does, and flushes each line so pipes
see them at once. A ``salt/event/dropped`` notice (this listener fell behind)
is printed whatever the glob, so a gap is never silent.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from briny.common.event import EventListener
from briny.common.exceptions import SaltInvocationError
from briny.master.clientapi import MasterClient
from briny.master.runners import RunnerContext

__all__ = ["event", "orchestrate", "orch"]


def event(
    ctx: RunnerContext,
    tagmatch: str = "*",
    count: int = -1,
    quiet: bool = False,
    pretty: bool = False,
    timeout: float | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Print events whose tag matches ``tagmatch`` (a glob) until ``count`` were seen
    (-1: forever) or none came for ``timeout`` seconds (default: wait forever)."""
    seen = 0
    deadline_gap = None if timeout is None else float(timeout)
    # require_bus: a clear error instead of waiting forever on no bus
    with EventListener(ctx.opts, str(tagmatch), name="master", require_bus=True) as events:
        while count < 0 or seen < count:
            got = events.get_event(deadline_gap if deadline_gap is not None else 3600)
            if got is None:
                if deadline_gap is not None:
                    break
                continue
            tag, data = got
            seen += 1
            if not quiet:
                body = json.dumps(data, indent=4 if pretty else None, sort_keys=pretty, default=str)
                sys.stdout.write(f"{tag}\t{body}\n")
                sys.stdout.flush()
    return {"outputter": "quiet", "data": seen}


def orchestrate(
    ctx: RunnerContext,
    mods: Any,
    saltenv: str = "base",
    test: Any = None,
    exclude: Any = None,
    pillar: Any = None,
    pillarenv: str | None = None,
    orchestration_jid: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run the orchestration SLS ``mods`` from the master's file roots on the master
    (:mod:`briny.master.orchestrate`); ``test=True`` for a dry run, ``pillar={...}``."""
    from briny.master.orchestrate import orchestrate as run_orchestration

    unknown = sorted(k for k in kwargs if not k.startswith("__"))
    if unknown:
        raise SaltInvocationError(f"state.orchestrate does not take {', '.join(repr(k) for k in unknown)}")
    with MasterClient(ctx.opts) as client:
        client.check_running()  # steps publish jobs: say so now, not in every step's comment
    return run_orchestration(ctx.opts, mods, saltenv, test, exclude, pillar, pillarenv, orchestration_jid)


def orch(ctx: RunnerContext, mods: Any, **kwargs: Any) -> dict[str, Any]:
    """``state.orchestrate`` under its short name."""
    return orchestrate(ctx, mods, **kwargs)
