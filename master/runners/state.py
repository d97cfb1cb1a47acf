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
from briny.master.runners import RunnerContext

__all__ = ["event"]


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
