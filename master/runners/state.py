"""``briny-run state.*``: ``state.event`` (watch the master event bus) and the orchestrate runners.

``state.orchestrate`` / ``orch``, ``orchestrate_single``, ``orchestrate_high`` and
``orchestrate_show_sls`` / ``orch_show_sls`` are :mod:`briny.master.orchestrate` (docs/ORCHESTRATE.md).

``state.event`` runs in ``briny-run`` on the master host; needs the running master (its
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

__all__ = [
    "event",
    "orch",
    "orch_show_sls",
    "orchestrate",
    "orchestrate_high",
    "orchestrate_show_sls",
    "orchestrate_single",
]


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
    _master_running(ctx)
    return run_orchestration(
        ctx.opts, mods, saltenv, test, exclude, pillar, pillarenv, orchestration_jid, on_job=ctx.on_job
    )


def orch(ctx: RunnerContext, mods: Any, **kwargs: Any) -> dict[str, Any]:
    """``state.orchestrate`` under its short name."""
    return orchestrate(ctx, mods, **kwargs)


def _master_running(ctx: RunnerContext) -> None:
    with MasterClient(ctx.opts) as client:
        client.check_running()  # steps publish jobs: say so now, not in every step's comment


def orchestrate_single(
    ctx: RunnerContext, fun: str, name: str, test: Any = None, queue: Any = False, pillar: Any = None, **kwargs: Any
) -> dict[str, Any]:
    """Run one orchestration state (``fun=salt.wheel name=key.list_all``, ``salt.function``, ...) on
    the master: ``{master id: state result}``."""
    from briny.master.orchestrate import orchestrate_single as run_single

    _master_running(ctx)
    return run_single(ctx.opts, fun, name, test, pillar, **kwargs)


def orchestrate_high(
    ctx: RunnerContext, data: Any, test: Any = None, queue: Any = False, pillar: Any = None, **kwargs: Any
) -> dict[str, Any]:
    """Run the high data ``data`` (``{id: {salt.state: [...]}, ...}``) as an orchestration:
    ``{master id: state results}``."""
    from briny.master.orchestrate import orchestrate_high as run_high

    unknown = sorted(k for k in kwargs if not k.startswith("__"))
    if unknown:
        raise SaltInvocationError(f"state.orchestrate_high does not take {', '.join(repr(k) for k in unknown)}")
    _master_running(ctx)
    return run_high(ctx.opts, data, test, pillar)


def orchestrate_show_sls(
    ctx: RunnerContext,
    mods: Any,
    saltenv: str = "base",
    test: Any = None,
    queue: Any = False,
    pillar: Any = None,
    pillarenv: str | None = None,
    pillar_enc: Any = None,
) -> dict[str, Any]:
    """The state data of the orchestration SLS ``mods`` as the master renders it (nothing runs)."""
    from briny.master.orchestrate import orchestrate_show_sls as show

    if pillar_enc:
        raise SaltInvocationError("pillar_enc is not supported by briny (no GPG-encrypted pillar)")
    return show(ctx.opts, mods, saltenv, test, pillar, pillarenv)


def orch_show_sls(ctx: RunnerContext, mods: Any, **kwargs: Any) -> dict[str, Any]:
    """``state.orchestrate_show_sls`` under its short name."""
    return orchestrate_show_sls(ctx, mods, **kwargs)
