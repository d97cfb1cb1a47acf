"""What the master lets a peer without a session cost it: answers, log lines, memory kept.

Runs on the master's loop, owned by :class:`briny.master.server.MasterServer`, which asks it
about every frame a peer can send without a session (``docs/PROTOCOL.md``, "Frame limits"):

- **answers**: :meth:`PeerGuard.allow` before a hello, a signed auth or an ``err`` refusal is
  answered: ``auth_peer_rate`` a second per connection (:class:`briny.master.peerlimit.PeerLimits`);
  past that the frame is dropped without an answer or any work, counted and reported once a
  second;
- **log lines**: every line such a peer can cause goes through one of the
  :class:`briny.common.ratelog.LogThrottle` here (one a second per kind, with counts);
- **memory**: after a burst of such frames (at least :data:`BURST` in a second) has ended, the
  housekeeping returns the allocator's free memory to the system (:func:`briny.common.memtrim.trim`,
  in a worker thread): for :data:`TRIM_WINDOW` seconds after the last busy second, at most
  every :data:`TRIM_EVERY` seconds, so the replies freed when a deaf peer's connection closes
  are returned too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from briny.common import config
from briny.common.ratelog import LogThrottle, short
from briny.master.peerlimit import PeerLimits

BURST = 1000  # frames without a session in one second that make a burst worth trimming after
TRIM_WINDOW = 60.0  # seconds after a burst during which quiet seconds trim
TRIM_EVERY = 5.0  # seconds between two trims


class PeerGuard:
    """The limits and throttled log lines for peers without a session (loop): see the module
    docstring. ``logger`` is the server's (the lines keep its name)."""

    def __init__(self, opts: dict[str, Any], logger: logging.Logger, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.limits = PeerLimits(
            config.number(opts, "auth_peer_rate"), config.count(opts, "ret_max_connections"), clock
        )
        self.dropped = LogThrottle(logger, clock=clock)  # frames dropped unanswered: unreadable, too big, wrong kind
        self.refused = LogThrottle(logger, clock=clock)  # auths refused with an err answer
        self.forged = LogThrottle(logger, clock=clock)  # signed auths whose signature does not verify
        self.over_rate = LogThrottle(logger, clock=clock)  # answers not given: over auth_peer_rate
        self.no_session = LogThrottle(logger, logging.INFO, clock=clock)  # a req for an id without a session
        self.bad_request = LogThrottle(logger, clock=clock)  # a req that does not open, is stale or replayed
        self.frames = 0  # frames without a session this second (counted by allow)
        self._burst_at = float("-inf")
        self._trimmed_at = float("-inf")

    def allow(self, peer: bytes, minion_id: str) -> bool:
        """Whether ``peer`` may be answered now (an answer without a session: a challenge, an auth
        decision, an ``err``); False (counted, reported) when it is over ``auth_peer_rate``."""
        self.frames += 1
        if self.limits.allow(peer):
            return True
        self.over_rate.note(
            "dropped a frame claiming id %r from peer %s unanswered: it sends faster than auth_peer_rate (%g a second)",
            short(minion_id),
            peer.hex()[:16],
            self.limits.rate,
        )
        return False

    def second(self) -> bool:
        """Once a second (housekeeping): whether to trim the heap now (see the module docstring)."""
        now = self.clock()
        busy, self.frames = self.frames >= BURST, 0
        if busy:
            self._burst_at = now
            return False
        if now - self._burst_at > TRIM_WINDOW or now - self._trimmed_at < TRIM_EVERY:
            return False
        self._trimmed_at = now
        return True
