"""What each minion last reported when it connected: its grains, in memory for targeting,
pillar and compiles and on disk so targeting survives a master restart; and its public config
(:mod:`briny.common.reported`, what templates the master renders for it see as ``opts``), in
memory only.

One msgpack file per minion under ``cachedir/grains/<id>.msgpack`` (ids are
validated before they become file names; a file that does not parse is
ignored with a log line).

Threads (``docs/DEVELOPING.md``, "Threads"):

- **the loop** is the only writer of the memory (equal grain and reported
  config values of many minions are kept once:
  :class:`~briny.master.sharedvalues.SharedValues`): :meth:`GrainsCache.put`,
  :meth:`GrainsCache.put_opts` (a minion's ``grains`` request) and
  :meth:`GrainsCache.remove` (its key is gone) check it with
  :func:`briny.common.onloop.assert_on_loop`;
- **any thread** reads: :meth:`get`, :meth:`opts_of`, :meth:`ids` and
  :meth:`snapshot` (targeting, pillar and state compiles run in the
  master's workers). A
  lock held for one dict operation makes each read consistent; what a
  minion reported is never changed in place (a new ``grains`` request
  replaces it whole), so a reader may keep what it got;
- **the cache's own writer thread** writes and removes the files, one at a
  time, so the writes of one minion land in the order they were made;
  :meth:`close` waits for them.

:meth:`load_all` reads the files once, at start, before the loop serves.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import os
import threading
from collections.abc import Mapping
from typing import Any


from briny.common.exceptions import SaltInvocationError
from briny.common.onloop import assert_on_loop
from briny.common.reported import ReportedConfig
from briny.master.minionfiles import MinionFiles
from briny.master.sharedvalues import SharedValues

log = logging.getLogger(__name__)


class GrainsCache:
    """What each minion last reported (see the module docstring for who may call what)."""

    def __init__(self, cachedir: str) -> None:
        self.folder = os.path.join(cachedir, "grains")
        self._files = MinionFiles(self.folder, "grains cache")
        self._data: dict[str, Mapping[str, Any]] = {}
        self._opts: dict[str, ReportedConfig] = {}
        self._shared = SharedValues()  # equal grain values of many minions kept once (the loop)
        self._lock = threading.Lock()
        self._writer = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="briny-grains")

    def _path(self, minion_id: str) -> str:
        return self._files.path(minion_id)

    # -- reads (any thread) ----------------------------------------------------------------------
    def get(self, minion_id: str) -> Mapping[str, Any] | None:
        with self._lock:
            return self._data.get(minion_id)

    def opts_of(self, minion_id: str) -> ReportedConfig | None:
        """What the master took of the config ``minion_id`` reported (None: it knows none)."""
        with self._lock:
            return self._opts.get(minion_id)

    def ids(self) -> list[str]:
        with self._lock:
            names = list(self._data)
        return sorted(names)

    def snapshot(self) -> dict[str, Mapping[str, Any]]:
        """Every minion's grains as they are now (a shallow copy: one consistent view)."""
        with self._lock:
            return dict(self._data)

    # -- writes (the loop) -----------------------------------------------------------------------
    def put(self, minion_id: str, grains: Mapping[str, Any]) -> None:
        """Keep a minion's new grains (loop) and write them to disk (the writer thread)."""
        assert_on_loop("the grains cache")
        kept = self._shared.share(grains)
        with self._lock:
            old = self._data.get(minion_id)
            self._data[minion_id] = kept
        if old is not None:
            self._shared.release(old)
        self._submit(self._write, minion_id, kept)

    def put_opts(self, minion_id: str, opts: ReportedConfig | None) -> None:
        """Keep what the master took of a minion's reported config (None: nothing usable); loop."""
        assert_on_loop("the grains cache")
        if isinstance(opts, ReportedConfig):  # equal values of many minions kept once, as grains
            opts = dataclasses.replace(opts, data=self._shared.share(opts.data))
        with self._lock:
            old = self._opts.pop(minion_id, None) if opts is None else self._opts.get(minion_id)
            if opts is not None:
                self._opts[minion_id] = opts
        self._release_opts(old)

    def _release_opts(self, old: ReportedConfig | None) -> None:
        if isinstance(old, ReportedConfig):
            self._shared.release(old.data)

    def remove(self, minion_id: str) -> None:
        """Forget a minion whose key was deleted (loop); its file goes in the writer thread."""
        assert_on_loop("the grains cache")
        with self._lock:
            old = self._data.pop(minion_id, None)
            old_opts = self._opts.pop(minion_id, None)
        if old is not None:
            self._shared.release(old)
        self._release_opts(old_opts)
        self._submit(self._unlink, minion_id)

    def _submit(self, fn: Any, *args: Any) -> None:
        try:
            self._writer.submit(fn, *args)
        except RuntimeError:  # closed: the master is stopping; memory was updated, the file is not
            log.debug("the grains cache is closed; %s not written", args[0])

    # -- files -------------------------------------------------------------------------------------
    def load_all(self) -> int:
        """Read every cached file (at start, before the loop serves); how many were loaded."""
        loaded = self._files.read_all()
        with self._lock:
            for minion_id, data in loaded.items():
                if minion_id not in self._data:
                    self._data[minion_id] = self._shared.share(data)
            return len(self._data)

    def _write(self, minion_id: str, grains: Mapping[str, Any]) -> None:
        """Persist one minion's grains atomically (the writer thread)."""
        try:
            self._files.write(minion_id, grains)
        except (OSError, SaltInvocationError) as exc:
            log.error("cannot write the grains cache of %s in %s: %s", minion_id, self.folder, exc)

    def _unlink(self, minion_id: str) -> None:
        self._files.remove(minion_id)

    def flush(self) -> None:
        """Wait for the file writes queued so far (any thread but the writer)."""
        self._writer.submit(lambda: None).result()

    def close(self) -> None:
        """Write what is queued, then stop the writer thread."""
        self._writer.shutdown(wait=True)
