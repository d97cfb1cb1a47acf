"""The live progress lines ``briny`` shows on a terminal while state runs go on.

Runs in the ``briny`` process (the operator's terminal). Fed by the
``salt/job/<jid>/prog/<minion id>/<n>`` events minions send for a job
``briny`` started with progress (see :mod:`briny.minion.progress`), it
keeps one line per minion still running, e.g.::

    web1: 12/20 states, 0 failed

drawn below whatever was printed already and redrawn in place (ANSI: the
cursor goes back up over the lines it drew and clears to the end of the
screen). :class:`~briny.master.opresults.Printer` clears the lines before it
prints a minion's result and draws them again after, and clears them for
good before the final output, so the normal output is never mixed with
them. Only used when stdout is a terminal; redraws are throttled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from briny.common.numbers import whole

REDRAW_EVERY = 0.1  # seconds between two redraws for progress alone


@dataclass
class MinionProgress:
    done: int = 0
    total: int = 0
    failed: int = 0

    def line(self, minion_id: str) -> str:
        return f"{minion_id}: {self.done}/{self.total} states, {self.failed} failed"


class LiveView:
    """Live lines of the minions still running a job; see the module docstring."""

    def __init__(
        self, stream: TextIO, interval: float = REDRAW_EVERY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream = stream
        self.interval = interval
        self.clock = clock
        self.minions: dict[str, MinionProgress] = {}
        self.drawn = 0  # lines on the screen now
        self.dirty = False
        self.last_draw = float("-inf")

    def update(self, minion_id: str, data: dict[str, Any]) -> None:
        """One progress event's data (``ret``, ``len``, and briny's running ``done``/``failed``)."""
        if not isinstance(data, dict):
            return
        ret = data.get("ret")
        if not isinstance(ret, dict):
            ret = {}
        entry = self.minions.setdefault(minion_id, MinionProgress())
        run_num = whole(ret.get("__run_num__"), -1)
        done = whole(data.get("done"), run_num + 1)
        entry.done = max(entry.done, done)
        entry.total = max(whole(data.get("len"), 0), entry.total)
        if "failed" in data:
            entry.failed = max(entry.failed, whole(data.get("failed"), 0))
        elif ret.get("result") is False:
            entry.failed += 1
        entry.done = min(entry.done, entry.total) if entry.total else entry.done
        self.dirty = True
        self.tick()

    def forget(self, minion_id: str) -> None:
        """The minion returned: its line goes (at the next draw)."""
        if self.minions.pop(minion_id, None) is not None:
            self.dirty = True

    def forget_all(self) -> None:
        """The job is over: every line goes now."""
        self.minions.clear()
        self.clear()
        self.dirty = False

    def tick(self) -> None:
        """Redraw when something changed and the last redraw is old enough."""
        if self.dirty and self.clock() - self.last_draw >= self.interval:
            self.draw()

    def clear(self) -> None:
        """Remove the drawn lines; the cursor is where they began."""
        if self.drawn:
            self.stream.write(f"\x1b[{self.drawn}F\x1b[J")
            self.stream.flush()
            self.drawn = 0
            self.dirty = bool(self.minions)

    def draw(self) -> None:
        """Replace the drawn lines with the current ones."""
        text = "".join(entry.line(mid) + "\n" for mid, entry in sorted(self.minions.items()))
        prefix = f"\x1b[{self.drawn}F\x1b[J" if self.drawn else ""
        if prefix or text:
            self.stream.write(prefix + text)
            self.stream.flush()
        self.drawn = len(self.minions)
        self.dirty = False
        self.last_draw = self.clock()
