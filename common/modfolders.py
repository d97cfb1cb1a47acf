"""What the module folders hold, read once per process and kept until they may have changed.

Runs wherever a :class:`~briny.common.loader.LazyLoader` is made (every job of a
minion makes fresh loaders). A folder's :class:`Listing` (its ``*.py`` file names
and the ``__virtualname__`` each declares) is read from disk once and kept:

- a built-in folder (``minion/host/modules/``, ``states/``) for the life of the
  process: its files come with briny and do not change while it runs;
- a custom folder (``extension_modules/<kind>``, a local tree's ``_modules``)
  until :func:`forget` (``saltutil.sync_*``, ``saltutil.refresh_modules``
  call it), or until a loader misses a module and asks :func:`recheck`: a
  listing older than :data:`RECHECK_AFTER` seconds is read again, so a module
  dropped in by hand is found the way Salt's loader finds it (on the first
  call that misses it), without a stat of every folder for every job. A folder
  that does not exist is kept as ``None`` the same way. A forked process (a
  job process) starts with no custom listing.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

VIRTUALNAME_RE = re.compile(r"""^__virtualname__\s*=\s*['"]([\w]+)['"]""", re.M)
RECHECK_AFTER = 1.0  # seconds: a miss reads again a custom folder's listing older than this


@dataclass(frozen=True)
class Listing:
    """One folder's modules: the stems of its ``*.py`` files, and virtual name -> the files
    declaring it (``__virtualname__`` other than their stem), read from the text."""

    names: frozenset[str]
    virtual: dict[str, list[Path]] = field(default_factory=dict)
    taken: float = 0.0  # time.monotonic() when it was read


def scan(folder: Path) -> Listing | None:
    """Read ``folder`` from disk; None when it is not a folder."""
    if not folder.is_dir():
        return None
    names: set[str] = set()
    virtual: dict[str, list[Path]] = {}
    for p in sorted(folder.glob("*.py")):
        names.add(p.stem)
        try:
            m = VIRTUALNAME_RE.search(p.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if m and m.group(1) != p.stem:
            virtual.setdefault(m.group(1), []).append(p)
    return Listing(frozenset(names), virtual, time.monotonic())


_UNREAD = Listing(frozenset())  # a folder not read yet (None is "not a folder")


class FolderCache:
    """The listings of this process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[Path, Listing | None] = {}
        self._generation = 0  # forget() calls so far
        self._builtin: set[Path] = set()

    def listing(self, folder: Path, builtin: bool = False) -> Listing | None:
        """``folder``'s listing, read on first use (None: not a folder)."""
        kept = self._kept.get(folder, _UNREAD)  # one dict read: atomic, no lock for the common case
        if kept is not _UNREAD:
            return kept
        generation = self._generation
        found = scan(folder)
        with self._lock:
            if generation != self._generation:  # forgotten while it was read: maybe stale, not kept
                return found
            self._kept[folder] = found
            if builtin:
                self._builtin.add(folder)
        return found

    def recheck(self, folder: Path) -> Listing | None:
        """``folder``'s listing, read again when it is older than :data:`RECHECK_AFTER` (a
        loader missed a module)."""
        with self._lock:
            kept = self._kept.get(folder)
            builtin = folder in self._builtin
        if builtin or (kept is not None and time.monotonic() - kept.taken < RECHECK_AFTER):
            return kept
        with self._lock:
            self._kept.pop(folder, None)
        return self.listing(folder)

    def forget(self) -> None:
        """Forget every custom folder's listing: the next loader reads them again."""
        with self._lock:
            self._generation += 1
            self._kept = {k: v for k, v in self._kept.items() if k in self._builtin}


FOLDERS = FolderCache()


def forget() -> None:
    """Custom modules may have changed (a sync, a refresh): read their folders again."""
    FOLDERS.forget()


os.register_at_fork(after_in_child=forget)  # a forked job process reads the custom folders itself
