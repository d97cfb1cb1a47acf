"""The minion daemon with no master (Salt's ``master_type: disable``, with ``file_client: local``).

The agent (:mod:`briny.minion.agent`) connects to nothing, starts its schedule and beacons at once,
and hands this what would go to a master: events go onto the minion's own event bus (beacons,
jobs' events), where the reactor of ``reactor:`` reacts with ``caller.<fun>``
(:mod:`briny.minion.reactor`); returns stay on the host, as Salt's masterless minion keeps them.
Runs on the agent's loop; the reactor has threads of its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from typing import Any

from briny.common.event import EventSender

log = logging.getLogger(__name__)


def warn_reactor(opts: dict[str, Any], masterless: bool) -> None:
    """Name a ``reactor:`` a minion with a master will not run (the master's reactor does)."""
    if opts.get("reactor") and not masterless:
        log.warning(
            "reactor: a minion runs a reactor only masterless (master_type: disable); "
            "the master's reactor reacts to this minion's events; this one does not run"
        )


class Masterless:
    """A masterless daemon's sender onto its own bus and the reactor on that bus (loop)."""

    def __init__(self, opts: dict[str, Any]) -> None:
        self.opts = opts
        self.events: EventSender | None = None
        self.reactor: Any = None

    async def start(self, bus_running: bool, executor: Any, pool: concurrent.futures.Executor) -> None:
        log.info("master_type disable: running masterless (no master; events stay on this minion's bus)")
        self.events = EventSender(self.opts, name="minion")
        if not self.opts.get("reactor"):
            return
        if not bus_running:
            log.error("reactor: this minion's event bus is not running; no reactions run")
            return
        from briny.minion.reactor import start as start_reactor

        self.reactor = await asyncio.get_running_loop().run_in_executor(pool, start_reactor, self.opts, executor)

    def deliver(self, cmd: str, payload: dict[str, Any]) -> bool:
        """What would go to a master: an event onto this minion's bus; a return stays here."""
        if cmd == "event" and self.events is not None and isinstance(payload.get("data"), dict):
            self.events.fire(str(payload.get("tag")), payload["data"])
        return True

    async def stop(self) -> None:
        """No new reactions (a bounded wait on running ones); the sender closed."""
        if self.reactor is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.reactor.stop)
            self.reactor = None
        if self.events is not None:
            self.events.close()
            self.events = None
