"""Relaying the minion's local event bus to its master(s).

Every event the minion's bus (``EventBus(opts, name="minion")``: ``event.send``, beacons, jobs'
events) takes is handed to the relay by the bus itself (its *sink*, on the bus's thread), then
sent in order on the loop by the agent's ``send``
(:meth:`briny.minion.agent.MinionAgent._to_every_master`, which keeps what no master can take now
in the outbox until the next session): what was sent, without the bus's ``_stamp`` and ``_seq``
(the master wraps it in Salt's ``_minion_event`` shape, :mod:`briny.master.busshape`); a beacon's
event with the minion's id added when it has none.

No subscription to join: the relay is the bus's sink from before the bus binds its sockets, so an
event fired the moment the daemon starts (a ZeroMQ subscriber would miss it: "slow joiner") is
relayed like any other. At most ``event_listener_hwm`` events wait here for the loop (the relay is
one more listener of the bus); past that they are dropped, counted, and the master gets
``salt/minion/<id>/event/dropped`` (``count``, ``where: relay``) before the next one. A
``salt/event/dropped`` notice of a process on this host (``where: sender``) goes to the master
under the same tag (a minion may not fire ``salt/event/...`` there); a listener's readiness
marker (``salt/event/listener/<hex>``) stays on this host.

Threads: :meth:`BusRelay.take` on **the bus's thread** (it only schedules onto the loop);
everything else on **the loop**.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from briny.common.event import BEACON_PREFIX, DROPPED_TAG, READY_PREFIX, stamp

log = logging.getLogger(__name__)

BUS_KEYS = ("_stamp", "_seq")  # what the local bus added to an event

Send = Callable[[str, dict[str, Any]], Awaitable[Any]]


def dropped_tag(minion_id: str) -> str:
    """The tag of a notice that events of ``minion_id`` did not reach the master."""
    return f"salt/minion/{minion_id}/event/dropped"


def dropped_event(minion_id: str, count: int, where: str, **extra: Any) -> dict[str, Any]:
    """The ``event`` payload telling the master ``count`` events of this minion were dropped
    (``where``: ``relay``, ``outbox`` or ``sender``)."""
    data = {**extra, "count": count, "where": where, "id": minion_id, "_stamp": stamp()}
    return {"tag": dropped_tag(minion_id), "data": data}


class BusRelay:
    """The minion bus's sink: events in the bus's order, sent one at a time on the loop."""

    def __init__(self, minion_id: str, send: Send, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        self.minion_id, self.send, self.limit = minion_id, send, limit
        self.dropped = 0  # events not relayed and not reported yet (loop)
        self._loop = loop
        self._items: deque[tuple[str, dict[str, Any]]] = deque()
        self._wake = asyncio.Event()

    def take(self, tag: str, data: dict[str, Any]) -> None:
        """The bus's sink (the bus's thread): hand the event to the loop and return."""
        try:
            self._loop.call_soon_threadsafe(self._put, tag, data)
        except RuntimeError:  # the loop is closed: the daemon is stopping
            log.debug("event %s not relayed: the minion is stopping", tag)

    def _put(self, tag: str, data: dict[str, Any]) -> None:
        if len(self._items) >= self.limit:
            self.dropped += 1
        else:
            self._items.append((tag, data))
        self._wake.set()

    def __len__(self) -> int:
        return len(self._items)

    def payload(self, tag: str, data: dict[str, Any]) -> dict[str, Any] | None:
        """What goes to the master for one event of the bus; None for what stays here."""
        if tag.startswith(READY_PREFIX):
            return None
        if tag == DROPPED_TAG:
            extra = {k: v for k, v in data.items() if k not in ("count", "where", "id")}
            return dropped_event(self.minion_id, _count(data.get("count")), str(data.get("where") or "sender"), **extra)
        if tag.startswith(BEACON_PREFIX):  # the master fires these as their data (briny.master.busshape)
            data.setdefault("id", self.minion_id)
        else:  # what was sent, as Salt's master shows it inside its wrapper: no bus stamps
            data = {k: v for k, v in data.items() if k not in BUS_KEYS}
        return {"tag": tag, "data": data}

    async def run(self) -> None:
        """Send every event handed over, oldest first, until cancelled (loop)."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._items or self.dropped:
                if self.dropped:
                    count, self.dropped = self.dropped, 0
                    log.warning("%d events of the local bus were dropped: %d waited for the master", count, self.limit)
                    await self.send("event", dropped_event(self.minion_id, count, "relay"))
                    continue
                tag, data = self._items.popleft()
                try:
                    body = self.payload(tag, data)
                    if body is not None:
                        await self.send("event", body)
                except Exception:  # one event's failure never stops the relay; logged
                    log.exception("the event %s was not relayed to the master", tag)


def _count(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
