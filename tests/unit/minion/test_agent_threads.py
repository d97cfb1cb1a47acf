"""The minion agent's thread rule (docs/DEVELOPING.md, "Threads"): what its loop owns (its grains,
its links to the masters) is touched on the loop only, also when a job's worker thread asks for it."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from briny.common.transport import MemoryHub
from briny.minion.agent import MinionAgent

from .test_agent_support import minion_opts


class Link:
    """A link to a master that records the thread reading whether it is up (it is not)."""

    def __init__(self) -> None:
        self.read_on: list[str] = []

    @property
    def up(self) -> bool:
        self.read_on.append(threading.current_thread().name)
        return False


def test_refresh_grains_from_a_worker_hands_the_grains_to_the_loop(tmp_path: Path, monkeypatch: Any) -> None:
    agent = MinionAgent(minion_opts(tmp_path), MemoryHub().client, event_bus=False, grains={"old": True})
    monkeypatch.setattr("briny.minion.host.grains.load_grains", lambda opts: {"new": True})
    link = Link()
    agent.links = [link]  # type: ignore[list-item]
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="the-loop")
    thread.start()
    try:
        agent._loop = loop
        done: list[bool] = []
        worker = threading.Thread(target=lambda: done.append(agent._refresh_grains()), name="a-worker")
        worker.start()
        worker.join(10)
        assert done == [True]
        assert agent.grains == {"new": True}
        assert link.read_on == ["the-loop"]  # never on the worker
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        agent.pool.shutdown(wait=False)


def test_take_grains_off_the_loop_is_refused(tmp_path: Path) -> None:
    agent = MinionAgent(minion_opts(tmp_path), MemoryHub().client, event_bus=False, grains={"old": True})
    try:
        try:
            agent._take_grains({"new": True})
        except AssertionError as exc:
            assert "the minion's grains and links" in str(exc)
        else:
            raise AssertionError("_take_grains ran off the loop")
        assert agent.grains == {"old": True}
    finally:
        agent.pool.shutdown(wait=False)
