"""How fast one connection may make the master answer without a session: a token bucket each.

Runs on the master's loop (:class:`briny.master.server.MasterServer` asks it before answering an
``auth`` frame, a hello or a signed auth, and before each ``err`` refusal). A peer is one
connection to the request port (its ZeroMQ routing id): each gets ``auth_peer_rate`` answers a
second, with a burst of as many; past that its frames are dropped without an answer (and
without any work), counted by the caller and reported once a second. A minion needs two
answers per auth (the challenge, the decision) and retries after seconds, so only a flood
meets the limit; a minion whose frame is dropped gets no answer and tries again after its
``auth_timeout``, as for any lost reply.

The table holds at most ``limit`` peers (the request port's ``ret_max_connections``, so every
connection that may exist has its bucket); past that the one heard from least recently gives
way, starting afresh (full) if it comes back. About 150 bytes a peer.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable


class PeerLimits:
    """Token buckets per peer (loop only): see the module docstring."""

    def __init__(self, rate: float, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = float(rate)
        self.burst = max(1.0, float(rate))
        self.limit = max(1, limit)
        self.clock = clock
        self.dropped = 0  # frames refused so far
        self._buckets: OrderedDict[bytes, list[float]] = OrderedDict()  # peer -> [tokens, when]

    def __len__(self) -> int:
        return len(self._buckets)

    def allow(self, peer: bytes) -> bool:
        """Whether ``peer`` may be answered once more now (and a token is spent)."""
        now = self.clock()
        bucket = self._buckets.get(peer)
        if bucket is None:
            if len(self._buckets) >= self.limit:
                self._buckets.popitem(last=False)
            bucket = self._buckets[peer] = [self.burst, now]
        else:
            self._buckets.move_to_end(peer)
            bucket[0] = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
            bucket[1] = now
        if bucket[0] >= 1.0:
            bucket[0] -= 1.0
            return True
        self.dropped += 1
        return False
