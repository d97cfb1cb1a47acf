"""gitfs updates in the master daemon: every remote fetched on its ``update_interval``.

A task on the master's loop wakes every second, hands the remotes whose interval passed to a
worker thread (:meth:`briny.master.gitfs.GitFS.update`: git runs there, never on the loop),
and, when ``fileserver_events`` is True, fires ``salt/fileserver/gitfs/update`` with
``{"changed": bool, "backend": "gitfs"}`` as Salt does. The first update runs at start; until
it ends, remotes serve what the cache held (their last good fetch, from before a restart).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from briny.master import fsbackend
from briny.master.fileserver import FileServer

log = logging.getLogger(__name__)

TICK = 1.0


def wanted(fs: FileServer) -> bool:
    """Whether ``fs`` has gitfs remotes to update (the daemon starts :func:`run` only then: a
    task of its loop that ends is taken for a failure)."""
    git = fsbackend.gitfs_of(fs.backends)
    return git is not None and bool(git.remotes)


async def run(opts: dict[str, Any], fs: FileServer, fire: Callable[[str, dict[str, Any]], Any] | None) -> None:
    """Update gitfs remotes as they fall due, until cancelled (loop)."""
    git = fsbackend.gitfs_of(fs.backends)
    if git is None or not git.remotes:
        return
    loop = asyncio.get_running_loop()
    while True:
        due = git.due()
        if due:
            try:
                report = await loop.run_in_executor(None, git.update, due)
            except Exception:  # a bug must not end the updates: logged, tried again next time
                log.exception("gitfs update failed")
            else:
                fs.update()  # listings of the new trees are walked at the next request
                if opts.get("fileserver_events") and fire is not None:
                    fire("salt/fileserver/gitfs/update", {"changed": bool(report["changed"]), "backend": "gitfs"})
        await asyncio.sleep(TICK)
