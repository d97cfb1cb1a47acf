"""Log lines a peer can cause, at most one a second per kind, each with a count.

Runs wherever a remote peer (a minion, or anyone reaching the master's request port) can make a
daemon log: a refused auth, a dropped frame, a full queue. Each kind of such line is one
:class:`LogThrottle`; :meth:`LogThrottle.note` counts an occurrence and logs at most one line
per ``every`` seconds (the first at once), saying how many occurred since the last line and in
all, so a flood of a million refusals writes one line a second per kind, and no peer can make
the log grow faster than (kinds) x (their longest line) a second. :meth:`LogThrottle.flush`
writes what was counted since the last line (the master's housekeeping calls it every second),
so the end of a burst is reported too (:func:`flush_all`: every throttle of the process).

Threads: any (a lock per throttle: the key store's worker threads share theirs); most run on
the daemon's loop.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable

MAX_ARG = 64  # characters of a peer's text (an id, a reason) shown in a throttled line
_ALL: weakref.WeakSet[LogThrottle] = weakref.WeakSet()


def short(value: object, limit: int = MAX_ARG) -> str:
    """``value`` as text of at most ``limit`` characters (a peer chooses it: its length is bounded)."""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class LogThrottle:
    """One kind of log line a peer can cause (see the module docstring)."""

    def __init__(
        self,
        logger: logging.Logger,
        level: int = logging.WARNING,
        every: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log = logger
        self.level = level
        self.every = every
        self.clock = clock
        self.total = 0  # occurrences ever counted
        self.pending = 0  # occurrences since the last line
        self.lines = 0  # lines written
        self._last: tuple[str, tuple[object, ...]] | None = None
        self._logged = float("-inf")
        self._lock = threading.Lock()
        _ALL.add(self)

    def note(self, msg: str, *args: object) -> None:
        """Count one occurrence (``msg % args`` describes it); log a line when the last one is
        ``every`` seconds old. Arguments a peer chooses should go through :func:`short`."""
        with self._lock:
            self.total += 1
            self.pending += 1
            self._last = (msg, args)
            self._flush()

    def flush(self) -> None:
        """Log what was counted since the last line (the latest occurrence, and the counts), if
        anything was and the last line is ``every`` seconds old."""
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        if not self.pending or self._last is None or self.clock() - self._logged < self.every:
            return
        msg, args = self._last
        if self.log.isEnabledFor(self.level):
            if self.pending == 1 and self.total == 1:
                self.log.log(self.level, msg, *args)
            else:
                self.log.log(
                    self.level,
                    "%s (%d like it since the last such line, %d in all)",
                    msg % args,
                    self.pending,
                    self.total,
                )
        self.lines += 1
        self.pending = 0
        self._logged = self.clock()


def flush_all() -> None:
    """:meth:`LogThrottle.flush` every throttle of this process (its daemon's loop, once a second)."""
    for throttle in list(_ALL):
        throttle.flush()
