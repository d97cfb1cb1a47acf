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

import contextlib
import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

import msgpack

from briny.common import config
from briny.common.atomicfile import TMP_PREFIX, write_atomic
from briny.common.exceptions import SaltInvocationError
from briny.common.ids import check_id, valid_id

log = logging.getLogger(__name__)

SUFFIX = ".msgpack"


class PillarFiles:
    """``cachedir/pillar``: one msgpack file per minion (see the module docstring)."""

    def __init__(self, opts: Mapping[str, Any]) -> None:
        self.folder = os.path.join(str(config.setting(opts, "cachedir", "master")), "pillar")
        self._lock = threading.Lock()

    def _path(self, minion_id: str) -> str:
        return os.path.join(self.folder, check_id(minion_id) + SUFFIX)

    def store(self, minion_id: str, pillar: Mapping[str, Any]) -> None:
        """Keep the pillar ``minion_id`` was just sent (a worker thread); a write that fails is
        logged (the minion got its pillar; only the runner's view is stale)."""
        with self._lock:
            try:
                os.makedirs(self.folder, mode=0o700, exist_ok=True)
                write_atomic(self._path(minion_id), msgpack.packb(dict(pillar), use_bin_type=True, default=str))
            except (OSError, SaltInvocationError) as exc:
                log.error("cannot write the cached pillar of %s in %s: %s", minion_id, self.folder, exc)

    def remove(self, minion_id: str) -> None:
        """Forget a minion whose key was deleted."""
        with self._lock, contextlib.suppress(OSError, SaltInvocationError):
            os.unlink(self._path(minion_id))

    def load(self, minion_id: str) -> dict[str, Any] | None:
        """The pillar ``minion_id`` last received, or None (never fetched, or unreadable: logged)."""
        try:
            with open(self._path(minion_id), "rb") as fh:
                data = msgpack.unpackb(fh.read(), raw=False, strict_map_key=False)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, SaltInvocationError, msgpack.ExtraData, msgpack.FormatError) as exc:
            log.warning("ignoring the cached pillar of %s: %s", minion_id, exc)
            return None
        return data if isinstance(data, dict) else None

    def ids(self) -> list[str]:
        """The minions that have a cached pillar (sorted)."""
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        found = (n[: -len(SUFFIX)] for n in names if n.endswith(SUFFIX) and not n.startswith(TMP_PREFIX))
        return sorted(i for i in found if valid_id(i))
