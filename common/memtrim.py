"""Give the C allocator's free memory back to the system (glibc's ``malloc_trim``).

Runs in a daemon's worker thread, after a burst (the master's housekeeping, when a flood of
requests without a session has ended: ``briny.master.unauth``). Replies and frames are
allocated with ``malloc`` by ZeroMQ and Python; once freed, glibc keeps most of that memory
in its arenas, so a process's RSS stays at its peak after a burst. ``malloc_trim(0)`` returns
the free pages of every arena. Only on Linux with glibc; elsewhere (musl, macOS) nothing.
ctypes releases the GIL during the call (a few ms on a heap of hundreds of MB).
"""

from __future__ import annotations

import ctypes
import logging
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)

_trim: Callable[[int], int] | None = None
_looked = False


def _find() -> Callable[[int], int] | None:
    global _trim, _looked
    if not _looked:
        _looked = True
        if sys.platform.startswith("linux"):
            try:
                _trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError) as exc:  # musl, or no glibc: nothing to trim with
                log.debug("malloc_trim is not available: %s", exc)
    return _trim


def available() -> bool:
    """Whether :func:`trim` can do anything here."""
    return _find() is not None


def trim() -> bool:
    """Return free heap memory to the system; whether some was (False where unavailable)."""
    fn = _find()
    return bool(fn(0)) if fn is not None else False
