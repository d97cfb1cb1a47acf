"""Returns and events the minion keeps while the master cannot take them.

A return or an event that gets no answer (no session, the master did not
reply, or answered ``err``) is kept here, in order, and sent again after the
next auth (:meth:`Outbox.flush`): an item leaves only once the master took
it. At most ``outbox_max`` (default :data:`OUTBOX_MAX`) are kept; when full, a
return pushes out the oldest event, and what cannot be kept is dropped with a
warning. Events dropped so are counted (:attr:`Outbox.dropped`) and, once what
waited went out, the master is told how many (the ``notice`` of
:meth:`Outbox.flush`: ``salt/minion/<id>/event/dropped``, ``where: outbox``).
Memory only: a minion restart loses what waited.

Threads: **the loop only** (:func:`briny.common.onloop.assert_on_loop`);
worker threads send through the loop.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from briny.common.onloop import assert_on_loop

log = logging.getLogger(__name__)

OUTBOX_MAX = 1000  # returns and events kept while there is no session
WHAT = "the minion's outbox"

# one request to the master: (cmd, payload) -> the reply, None when it was not taken
Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]


class Outbox:
    """Messages (``ret`` or ``event``, payload) waiting for the master, oldest first (loop)."""

    def __init__(self, limit: int = OUTBOX_MAX) -> None:
        self.limit = limit
        self.dropped = 0  # events dropped (not kept, or pushed out) and not reported to a master yet
        self._items: deque[tuple[str, dict[str, Any]]] = deque()

    def __len__(self) -> int:
        return len(self._items)

    def keep(self, cmd: str, payload: dict[str, Any]) -> None:
        """Keep a message for after the next auth; when full, events give way to returns."""
        assert_on_loop(WHAT)
        if len(self._items) >= self.limit:
            victim = next((m for m in self._items if m[0] == "event"), None) if cmd == "ret" else None
            if victim is None:
                log.warning("%d messages wait for the master already; this %s is dropped", self.limit, cmd)
                self.dropped += cmd == "event"
                return
            self._items.remove(victim)
            self.dropped += 1
        self._items.append((cmd, payload))
        log.info("%s kept for sending after the next auth (%d waiting)", cmd, len(self._items))

    async def flush(
        self, send: Send, up: Callable[[], bool], notice: Callable[[int], dict[str, Any]] | None = None
    ) -> None:
        """Send what waited, oldest first, while ``up()`` (a live session); an item leaves the
        outbox only once the master took it. Then, when events were dropped, the ``event``
        ``notice(count)`` builds (the count is reset once the master took it)."""
        assert_on_loop(WHAT)
        while self._items and up():
            item = self._items[0]
            if await send(*item) is None:
                return
            if self._items and self._items[0] is item:
                self._items.popleft()
        count = self.dropped
        if count and notice is not None and not self._items and up() and await send("event", notice(count)) is not None:
            self.dropped -= count
