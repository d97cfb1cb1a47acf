"""Relaying the minion's local event bus to its master(s).

Every event fired on the minion's bus (``EventBus(opts, name="minion")``:
``event.send``, beacons, jobs' events) is read here and handed to the agent's
``send`` (:meth:`briny.minion.agent.MinionAgent._to_every_master`), with the
minion's id added when the event has none.

Threads: **the loop** (a ZeroMQ SUB socket on the bus's ``ipc://`` publisher).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


async def forward_bus(pub_path: str, minion_id: str, send: Callable[[str, dict[str, Any]], Awaitable[Any]]) -> None:
    """Read the bus at ``pub_path`` and ``send("event", {"tag": ..., "data": ...})`` each event,
    until cancelled."""
    import zmq
    import zmq.asyncio

    from briny.common.event import decode

    sock = zmq.asyncio.Context.instance().socket(zmq.SUB)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SUBSCRIBE, b"")
    sock.connect(f"ipc://{pub_path}")
    try:
        while True:
            event = decode(await sock.recv_multipart())
            if event is None:
                continue
            tag, data = event
            data.setdefault("id", minion_id)
            await send("event", {"tag": tag, "data": data})
    finally:
        sock.close()
