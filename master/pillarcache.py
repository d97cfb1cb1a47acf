"""The pillar each minion last received, on the master's disk (Salt's minion data cache).

When a minion fetches its pillar (the ``pillar`` request), the master keeps
what it sent in ``cachedir/pillar/<id>.msgpack``, as Salt's master stores it
in its minion data cache; ``briny-run cache.pillar`` reads it (a process of
its own: the master's in-memory pillar cache is not reachable from there).
The pillar holds secrets: the folder is 0700 and each file 0600, as the
master's other caches. A minion's file goes when its key is deleted.

Threads: :meth:`PillarFiles.store` runs in the master's worker threads (the
``pillar`` request handler); one lock makes the writes of one master one at
a time, so two requests of one minion land in the order they were handled.
Reads (``briny-run``) take no lock: each file is replaced atomically.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any


from briny.common import config
from briny.common.exceptions import SaltInvocationError
from briny.master.minionfiles import MinionFiles

log = logging.getLogger(__name__)


class PillarFiles:
    """``cachedir/pillar``: one msgpack file per minion (see the module docstring)."""

    def __init__(self, opts: Mapping[str, Any]) -> None:
        self.folder = os.path.join(str(config.setting(opts, "cachedir", "master")), "pillar")
        self._files = MinionFiles(self.folder, "cached pillar")
        self._lock = threading.Lock()

    def store(self, minion_id: str, pillar: Mapping[str, Any]) -> None:
        """Keep the pillar ``minion_id`` was just sent (a worker thread); a write that fails is
        logged (the minion got its pillar; only the runner's view is stale)."""
        with self._lock:
            try:
                self._files.write(minion_id, pillar)
            except (OSError, SaltInvocationError) as exc:
                log.error("cannot write the cached pillar of %s in %s: %s", minion_id, self.folder, exc)

    def remove(self, minion_id: str) -> None:
        """Forget a minion whose key was deleted."""
        with self._lock:
            self._files.remove(minion_id)

    def load(self, minion_id: str) -> dict[str, Any] | None:
        """The pillar ``minion_id`` last received, or None (never fetched, or unreadable: logged)."""
        return self._files.read(minion_id)

    def ids(self) -> list[str]:
        """The minions that have a cached pillar (sorted)."""
        return self._files.ids()
