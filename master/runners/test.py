"""``briny-run test.*``: Salt's runner test functions (``test.sleep``, ``test.arg``).

Runs in ``briny-run`` and in the master's reactor (``runner.test.sleep``: a
slow reaction, as in ``bench/events.py``). Needs nothing of the master.
"""

from __future__ import annotations

import time
from typing import Any

from briny.master.runners import RunnerContext

__all__ = ["arg", "sleep"]


def sleep(ctx: RunnerContext, s_time: float = 10) -> bool:
    """Sleep ``s_time`` seconds, then return True (Salt's ``test.sleep`` runner)."""
    time.sleep(float(s_time))
    return True


def arg(ctx: RunnerContext, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The arguments it was given, as Salt's ``test.arg`` runner returns them."""
    return {"args": list(args), "kwargs": {k: v for k, v in kwargs.items() if not k.startswith("__")}}
