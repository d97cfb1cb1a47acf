"""``briny-run doc.*``: the documentation of runners and execution functions (Salt's ``doc`` runner).

Runs in ``briny-run`` on the master host.

- ``runner``: ``{"module.function": docstring}`` for every runner
  ``briny-run`` offers (no master needed);
- ``execution``: ``{"module.function": docstring}`` for every execution
  function the minions have, from ``sys.doc`` sent to every minion through
  the running master (``timeout`` seconds for the answers, the master's
  ``timeout`` by default); the answers of the minions are merged, a later
  minion's docstring over an earlier one's. Salt returns ``[]`` when the
  master cannot be reached; briny fails with the reason.
"""

from __future__ import annotations

import inspect
from typing import Any

from briny.master.runners import RunnerContext, get_runner, list_functions, list_modules

__all__ = ["execution", "runner"]


def runner(ctx: RunnerContext, **kwargs: Any) -> dict[str, str | None]:
    """Every runner's docstring."""
    docs: dict[str, str | None] = {}
    for module in list_modules():
        for name in list_functions(module):
            docs[name] = inspect.getdoc(get_runner(name))
    return docs


def execution(ctx: RunnerContext, timeout: float | None = None, **kwargs: Any) -> dict[str, Any]:
    """Every execution function's docstring, as the minions report them (``sys.doc``)."""
    _, returns = ctx.cmd("*", "sys.doc", timeout=timeout)
    docs: dict[str, Any] = {}
    for minion in sorted(returns):
        answer = returns[minion].get("return")
        if isinstance(answer, dict) and not returns[minion].get("retcode"):
            docs.update(answer)
    return dict(sorted(docs.items()))
