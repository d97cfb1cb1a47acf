"""A real master (master/server.py) and a real minion agent (minion/agent.py) on one MemoryHub,
for the unit tests that need both halves of the protocol in one process. No tests here."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from briny.common.config import MASTER_DEFAULTS, apply_config
from briny.common.transport import MemoryHub, ServerTransport
from briny.master.daemon import build_server
from briny.master.jobcache.sqlite import SqliteJobCache
from briny.master.keys.store import KeyStore
from briny.master.server import MasterServer
from briny.minion.agent import MinionAgent

from tests.waiting import until

from .minion.test_agent_support import Running, minion_opts


@dataclass
class Pair:
    hub: MemoryHub
    server: MasterServer
    agent: MinionAgent
    keys: KeyStore
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def job(self, fun: str, *arg: Any, timeout: float = 10.0) -> Any:
        """Publish ``fun`` to the minion and wait for its return (from the master's events)."""
        jid = (await self.server.publisher.publish(self.agent.id, "glob", fun, list(arg)))["jid"]
        return await self.wait_return(jid, timeout)

    async def wait_return(self, jid: str, timeout: float = 10.0) -> Any:
        return await return_of(self.events, jid, self.agent.id, timeout)


async def return_of(events: list[tuple[str, dict[str, Any]]], jid: str, minion_id: str, timeout: float = 10.0) -> Any:
    """The ``return`` of job ``jid`` from ``minion_id``, once the master fired its return event
    into ``events`` (the list a test master records its events in)."""
    tag = f"salt/job/{jid}/ret/{minion_id}"
    found = await until(lambda: [d for t, d in events if t == tag], timeout, f"the return of job {jid}")
    return found[0]["return"]


async def server_idle(server: MasterServer, queue: asyncio.Queue[Any] | None = None, timeout: float = 10.0) -> None:
    """Until ``server`` has handled every frame in ``queue`` (a ``MemoryHub``'s requests) and every
    task it spawned (auths, blocking requests, publishes) is done: what it was sent so far has had
    all its effects. The master takes a frame off the queue and handles it in the same loop step
    (``MemoryServer.reply`` never yields), so an empty queue means handled."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        pending = [t for t in server._tasks if not t.done()]
        if not pending and (queue is None or queue.empty()):
            return
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise AssertionError(f"the master still had {len(pending)} task(s) and queued frames after {timeout} s")
        if pending:
            await asyncio.wait(pending, timeout=left)
        else:
            await asyncio.sleep(0.005)  # the receive loop takes the next frame


def master_opts(root: Path, file_roots: dict[str, list[str]] | None = None, **extra: Any) -> dict[str, Any]:
    """A test master's opts under ``root`` (auto_accept)."""
    return apply_config(
        {
            "root_dir": str(root),
            "pki_dir": "pki",
            "cachedir": "cache",
            "sock_dir": "sock",
            "auto_accept": True,
            "file_roots": file_roots or {"base": [str(root / "srv")]},
            "pillar_roots": {"base": [str(root / "pillar")]},
            **extra,
        },
        MASTER_DEFAULTS,
        "test",
    )


@dataclass
class RunningMaster:
    server: MasterServer
    keys: KeyStore
    cache: SqliteJobCache
    task: asyncio.Task[None]
    events: list[tuple[str, dict[str, Any]]]


@contextlib.asynccontextmanager
async def running_master(opts: dict[str, Any], transport: ServerTransport) -> AsyncIterator[RunningMaster]:
    """A master serving on ``transport`` (its events recorded), stopped and closed afterwards."""
    keys = KeyStore(opts, fire_events=False)
    cache = SqliteJobCache(os.path.join(opts["cachedir"], "jobs.sqlite"))
    events: list[tuple[str, dict[str, Any]]] = []
    server = build_server(opts, transport, keys, cache, fire=lambda t, d: events.append((t, d)))
    task = asyncio.ensure_future(server.serve())
    try:
        yield RunningMaster(server, keys, cache, task, events)
    finally:
        server.stop()
        task.cancel()
        server.close()
        server.grains.close()
        cache.close()


@contextlib.asynccontextmanager
async def real_pair(
    root: Path,
    *,
    file_roots: dict[str, list[str]] | None = None,
    wrap: Callable[[ServerTransport], ServerTransport] | None = None,
    **minion_extra: Any,
) -> AsyncIterator[Pair]:
    """A master under ``root/master`` and a connected minion ``m1`` under ``root/minion``;
    ``wrap`` puts something between the master and the hub (a man in the middle)."""
    hub = MemoryHub()
    async with running_master(
        master_opts(root / "master", file_roots), wrap(hub.server) if wrap else hub.server
    ) as master:
        agent = MinionAgent(minion_opts(root / "minion", **minion_extra), hub.client, event_bus=False)
        async with Running(agent):
            await asyncio.wait_for(agent.connected.wait(), 10)
            yield Pair(hub, master.server, agent, master.keys, master.events)
