"""The minion daemon's beacon task: runs :class:`~briny.minion.beacons.Beacons` and sends their events.

Runs on the agent's asyncio loop, timed as the scheduler (:mod:`briny.minion.scheduler`) is: it
starts once the first session with the master is up (Salt's ``beacons_before_connect: False``),
adds ``beacons:`` from this minion's pillar to the config's, then sleeps until the next beacon
is due. Each due beacon reads the host in a worker thread (:class:`HostReadings`: the load
averages, the mount table, ``service.status``, ``status.*``) and its events go to the master's
bus through the daemon's event path (``send(tag, data)``: the agent's ``deliver("event", ...)``),
where the reactor can match ``salt/beacon/<id>/<name>/``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from briny.common import loader
from briny.common.exceptions import CommandExecutionError
from briny.common.onloop import call_on_loop
from briny.minion.beaconctl import ACTIONS, control, save_path
from briny.minion.beacons import Beacon, Beacons, Event, Host
from briny.minion.pillar import pillar_section
from briny.minion.scheduler import nap

log = logging.getLogger(__name__)

DEFAULT_LOOP_INTERVAL = 1.0  # Salt 3007's minion loop_interval: a beacon without 'interval' runs this often
CONTROL_WAIT = 30.0  # seconds a thread job waits for the loop to answer a beacons.* call


class HostReadings:
    """The real host, as beacons read it (worker thread). ``salt()`` gives the minion's
    ``__salt__`` (made once, on first use) for ``service.status`` and ``status.*``."""

    def __init__(self, salt: Callable[[], Any]) -> None:
        self._make_salt = salt
        self._salt: Any = None

    def _fun(self, name: str) -> Callable[..., Any]:
        if self._salt is None:
            self._salt = self._make_salt()
        try:
            fun: Callable[..., Any] = self._salt[name]
        except KeyError as exc:
            raise CommandExecutionError(f"'{name}' is not available") from exc
        return fun

    def loadavg(self) -> tuple[float, float, float]:
        return os.getloadavg()

    def mounts(self) -> list[tuple[str, float]]:
        out = []
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as table:
            points = [line.split()[1].replace("\\040", " ") for line in table if len(line.split()) > 1]
        for point in dict.fromkeys(points):
            try:
                st = os.statvfs(point)
            except OSError:
                continue
            used = (st.f_blocks - st.f_bfree) * st.f_frsize
            total = used + st.f_bavail * st.f_frsize
            out.append((point, round(used * 100.0 / total, 1) if total else 0.0))
        return out

    def service_running(self, name: str) -> bool:
        return bool(self._fun("service.status")(name))

    def status(self, fun: str) -> Any:
        return self._fun(f"status.{fun}")()

    def path_exists(self, path: str) -> bool:
        return os.path.exists(path)


def daemon_salt(executor: Any) -> Callable[[], Any]:
    """A maker of the daemon's ``__salt__`` for :class:`HostReadings` (``executor``: the agent's
    :class:`~briny.minion.executor.Executor`; no pillar: beacons read the host only)."""

    def make() -> Any:
        grains = dict(executor.grains())
        return loader.minion_mods({**executor.opts, "grains": grains}, grains, {}, job=executor.job_context())

    return make


class BeaconRunner:
    """The beacons of one minion daemon and the task running them (loop)."""

    def __init__(
        self,
        opts: dict[str, Any],
        minion_id: str,
        host: Host,
        send: Callable[[str, dict[str, Any]], Awaitable[Any]],
        pillar: Callable[[], dict[str, Any]],
        pool: concurrent.futures.Executor,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        loop_interval = opts.get("loop_interval", DEFAULT_LOOP_INTERVAL)
        if isinstance(loop_interval, bool) or not isinstance(loop_interval, (int, float)) or loop_interval <= 0:
            log.error("'loop_interval' must be a number of seconds above 0, not %r; using 1", loop_interval)
            loop_interval = DEFAULT_LOOP_INTERVAL
        self.beacons = Beacons(minion_id, float(loop_interval), clock)
        self.beacons.load(opts.get("beacons"), "config")
        self.host = host
        self.send = send
        self.pillar = pillar  # blocking: this minion's pillar (run in ``pool``)
        self.pool = pool
        self.wall = wall
        self.path = save_path(opts)
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, connected: asyncio.Event, stop: asyncio.Event) -> None:
        """Run the beacons until ``stop`` (loop). Idle (one wait on ``stop``) when none is set."""
        self._wake = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        await connected.wait()
        await self.load_pillar()
        while not stop.is_set():
            for beacon in self.beacons.due():
                await self._run(beacon)
            self._wake.clear()
            await nap(stop, self._wake, self.beacons.seconds_to_next() if self.beacons.beacons else None)

    async def load_pillar(self) -> None:
        """Add (or replace) the beacons of ``beacons:`` in this minion's pillar (loop)."""
        found, beacons = await pillar_section(self.pillar, self.pool, "beacons")
        if found:
            self.beacons.load(beacons, "pillar")
        if self._wake is not None:
            self._wake.set()

    async def _run(self, beacon: Beacon) -> None:
        loop = asyncio.get_running_loop()
        found: list[Event] = await loop.run_in_executor(self.pool, self.beacons.run, beacon, self.host, self.wall())
        for tag, data in found:
            log.debug("beacon %r fires %s", beacon.name, tag)
            await self.send(tag, data)

    def control(self, action: str, args: dict[str, Any]) -> Any:
        """One ``beacons.<action>`` call (loop); wakes the task so a change takes effect now."""
        if action not in ACTIONS:
            return {"result": False, "comment": f"beacons has no action {action!r}"}
        answer = control(self.beacons, action, args, self.path)
        if self._wake is not None:
            self._wake.set()
        return answer

    def control_sync(self, action: str, args: dict[str, Any]) -> Any:
        """:meth:`control` from a worker thread (a thread job), through the loop; None when the
        daemon's loop does not answer."""
        return call_on_loop(self._loop, lambda: self.control(action, args), CONTROL_WAIT, f"beacons.{action}")
