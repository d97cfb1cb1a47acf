"""``briny-run salt.cmd FUN [ARG ...] [key=value ...]``: an execution function run on the master.

Runs in ``briny-run`` on the master host, as Salt's ``salt.cmd`` runner: the
built-in execution modules are loaded afresh with the master's config as
``__opts__``, the master's id as the only grain (``{"id": <id>}``, as in
orchestration; briny's master does not collect the core grains, which are the
minion's) and an empty pillar, or with ``with_pillar=True`` the pillar
compiled from the master's own ``pillar_roots`` for that id. The function's
answer is the runner's; a function that does not exist answers Salt's
``'FUN' is not available.`` string; one that fails fails the runner (exit 1,
its error printed). Custom module folders are not loaded (Salt loads modules
synced to the master with its ``saltutil.sync_modules`` runner, which briny
does not have).
"""

from __future__ import annotations

import logging
from typing import Any

from briny.common import config, loader
from briny.common.args import call_function
from briny.common.fileclient import LocalFileClient
from briny.common.jobcontext import JobContext
from briny.common.pillar import compile_local_pillar
from briny.master.runners import RunnerContext

log = logging.getLogger(__name__)

__all__ = ["cmd"]


def cmd(ctx: RunnerContext, fun: Any, *args: Any, with_pillar: Any = False, **kwargs: Any) -> Any:
    """Run the execution function ``fun`` on the master with ``args`` and ``kwargs``."""
    log.debug("salt.cmd runs %s on the master", fun)
    kwargs = {k: v for k, v in kwargs.items() if not str(k).startswith("__")}
    opts = dict(ctx.opts)
    opts.setdefault("saltenv", "base")
    grains = {"id": str(opts.get("id") or "master")}
    follow = bool(config.setting(opts, "fileserver_followsymlinks"))
    job = JobContext(file_client=LocalFileClient(opts.get("file_roots") or {}, follow))
    mods = loader.minion_mods(opts, grains, {}, extra_dirs=[], job=job)
    try:
        if with_pillar is True or str(with_pillar).lower() == "true":
            pillar = compile_local_pillar(opts, grains, mods)
            mods.release()
            mods = loader.minion_mods(opts, grains, pillar, extra_dirs=[], job=job)
        name = str(fun)
        if name not in mods:
            return f"'{name}' is not available."
        return call_function(mods[name], name, list(args), kwargs)
    finally:
        mods.release()
