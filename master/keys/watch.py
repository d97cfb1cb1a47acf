"""How the master learns that the key store changed: one path, reading the key table itself.

The key store's table (:mod:`briny.master.keys.store`: the folders ``pki_dir/minions*`` with
``key_store: files``, a PostgreSQL table with ``key_store: postgres``) is the source of truth,
whoever changes it: ``briny-key`` (another process), the master's own auth decisions, an
operator moving a file by hand, another master sharing the table. The master reads it one way:
:meth:`KeyWatch.read`; the folders cost a ``stat`` each and are listed again only when their stamp
changed, the PostgreSQL table costs one query of its change counter and is listed again only
when it moved; every listing that finds a change adds one to the store's ``generation``. The
master reads it

- every :data:`KEY_CHECK_INTERVAL` seconds (its housekeeping), and
- at each publish, with the targeting that reads the accepted ids anyway,

and hands each newer :class:`KeyView` to the loop, which drops the sessions
of minions no longer accepted and forgets the grains of minions with no key
left (:meth:`briny.master.server.MasterServer.apply_keys`). Cost while nothing
changes: four ``stat`` calls (or one query) a second; per change, one listing
and one pass over the sessions. ``docs/PROTOCOL.md``, "Key changes".

Threads: :meth:`KeyWatch.read` runs in the master's worker threads (it
touches the file system or the database), any number at once; the views it
returns are frozen and go to the loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from briny.master.keys.store import ACC, REJ, KeyStore

KEY_CHECK_INTERVAL = 1.0  # seconds between two reads of the key folders by the housekeeping


@dataclass(frozen=True)
class KeyView:
    """The key store as one read saw it."""

    generation: int  # the key store's generation at the read: a newer store has a larger one
    accepted: frozenset[str]  # accepted and not also rejected
    known: frozenset[str]  # ids with a key in any folder
    read_at: float  # monotonic time the read started: a session made later saw a newer store


class KeyWatch:
    """Reads the key store for the master (worker threads); see the module docstring."""

    def __init__(self, keys: KeyStore, clock: Callable[[], float] = time.monotonic) -> None:
        self.keys = keys
        self.clock = clock
        self._lock = threading.Lock()
        self._view: KeyView | None = None

    def read(self) -> KeyView:
        """The key store now: the last view again while no folder changed, else a new one."""
        read_at = self.clock()
        generation, folders = self.keys.folders()
        with self._lock:
            last = self._view
            if last is not None and last.generation >= generation:
                return last
            known = frozenset().union(*folders.values())
            self._view = KeyView(generation, folders[ACC] - folders[REJ], known, read_at)
            return self._view
