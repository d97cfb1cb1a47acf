"""Progress events of a state run, light enough for 10,000 states.

Runs in a job's worker thread on the minion. When ``briny`` asks for progress
(the publish carries ``"progress": true``), ``state.apply`` / ``highstate`` /
``sls`` run the engine with Salt's ``state_events`` on and pass its events
through :class:`ProgressEvents`, which:

- keeps Salt's tag, ``salt/job/<jid>/prog/<minion id>/<__run_num__>``, and
  data ``{"ret": ..., "len": <chunks>}``, but sends only a minimal ``ret``
  (``result``, ``name``, ``__id__``, ``__sls__``, ``__run_num__``,
  ``duration``: no changes, no comment) plus running totals ``done`` and
  ``failed`` (so a reader that missed events still shows the right counts);
- rate-limits them with a token bucket (a burst of :data:`BURST` events,
  then :data:`RATE` per second): a small run sends one event per state, a
  huge one a bounded stream; the last held-back event is sent by
  :meth:`flush` when the run ends;
- passes every other event (``fire_event`` states' ``salt/state_result/...``)
  through untouched, counting its state in the totals.

No thread, no sleep: the bucket is refilled from the clock on each event.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

BURST = 200  # events sent at once before the rate applies
RATE = 50.0  # events per second after the burst
MINIMAL_KEYS = ("result", "name", "__id__", "__sls__", "__run_num__", "duration")

FireEvent = Callable[[str, dict[str, Any]], None]


def is_progress_tag(tag: str) -> bool:
    parts = tag.split("/")
    return len(parts) == 6 and parts[:2] == ["salt", "job"] and parts[3] == "prog"


def minimal(ret: Any) -> dict[str, Any]:
    """The few keys of a state's result a progress reader needs."""
    if not isinstance(ret, dict):
        return {}
    return {k: ret[k] for k in MINIMAL_KEYS if k in ret}


class ProgressEvents:
    """A ``fire_event`` callable for the engine; see the module docstring."""

    def __init__(
        self, fire: FireEvent, burst: int = BURST, rate: float = RATE, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.fire = fire
        self.burst = burst
        self.rate = rate
        self.clock = clock
        self.tokens = float(burst)
        self.last = clock()
        self.done = 0
        self.failed = 0
        self.sent = 0
        self.held: tuple[str, dict[str, Any]] | None = None

    def _count(self, data: Any) -> None:
        ret = data.get("ret") if isinstance(data, dict) else None
        self.done += 1
        if isinstance(ret, dict) and ret.get("result") is False:
            self.failed += 1

    def _take(self) -> bool:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def __call__(self, tag: str, data: dict[str, Any]) -> None:
        self._count(data)
        if not is_progress_tag(tag):
            self.fire(tag, data)
            return
        body = {"ret": minimal(data.get("ret")), "len": data.get("len"), "done": self.done, "failed": self.failed}
        if self._take():
            self.held = None
            self.sent += 1
            self.fire(tag, body)
        else:
            self.held = (tag, body)

    def flush(self) -> None:
        """Send the last event held back by the rate limit (the run is over)."""
        if self.held is not None:
            tag, body = self.held
            self.held = None
            body.update(done=self.done, failed=self.failed)
            self.sent += 1
            self.fire(tag, body)
