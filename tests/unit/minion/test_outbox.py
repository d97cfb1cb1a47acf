"""The minion's outbox (minion/outbox.py): order, the limit, partial flushes, the thread rule."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import pytest

from briny.minion.outbox import Outbox


class Master:
    """Takes what it is sent until ``fail_after`` items, then gives no answer."""

    def __init__(self, fail_after: int = 1_000_000) -> None:
        self.took: list[tuple[str, Any]] = []
        self.fail_after = fail_after

    async def send(self, cmd: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        if len(self.took) >= self.fail_after:
            return None
        self.took.append((cmd, payload["n"]))
        return {"ok": True}


def test_flush_sends_oldest_first_and_keeps_what_was_not_taken():
    async def main() -> None:
        box = Outbox()
        for n in range(5):
            box.keep("ret" if n % 2 else "event", {"n": n})
        master = Master(fail_after=3)
        await box.flush(master.send, lambda: True)
        assert master.took == [("event", 0), ("ret", 1), ("event", 2)] and len(box) == 2
        master.fail_after = 100
        await box.flush(master.send, lambda: False)  # no session: nothing sent
        assert len(box) == 2
        await box.flush(master.send, lambda: True)
        assert master.took[3:] == [("ret", 3), ("event", 4)] and len(box) == 0

    asyncio.run(main())


def test_when_full_a_return_pushes_out_the_oldest_event_and_an_event_is_dropped(caplog):
    async def main() -> None:
        box = Outbox(limit=3)
        box.keep("ret", {"n": 0})
        box.keep("event", {"n": 1})
        box.keep("event", {"n": 2})
        box.keep("event", {"n": 3})  # full: dropped
        box.keep("ret", {"n": 4})  # full: the oldest event (1) gives way
        box.keep("ret", {"n": 5})  # and the next one (2)
        box.keep("ret", {"n": 6})  # only returns left: dropped
        master = Master()
        await box.flush(master.send, lambda: True)
        assert master.took == [("ret", 0), ("ret", 4), ("ret", 5)]

    asyncio.run(main())
    assert caplog.text.count("3 messages wait for the master already") == 2


def test_only_the_loop_touches_it():
    async def main() -> None:
        box = Outbox()
        loop = asyncio.get_running_loop()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            with pytest.raises(AssertionError, match="the minion's outbox belongs to the asyncio loop"):
                await loop.run_in_executor(pool, box.keep, "ret", {"n": 0})
        assert len(box) == 0

    asyncio.run(main())


def test_events_dropped_while_full_are_announced_once_what_waited_went_out():
    notices: list[int] = []

    def notice(count: int) -> dict[str, Any]:
        notices.append(count)
        return {"tag": "salt/minion/m1/event/dropped", "data": {"count": count, "where": "outbox"}, "n": -count}

    async def main() -> Master:
        box = Outbox(limit=2)
        box.keep("event", {"n": 0})
        box.keep("event", {"n": 1})
        box.keep("event", {"n": 2})  # full: dropped
        box.keep("ret", {"n": 3})  # full: pushes out event 0
        assert box.dropped == 2
        master = Master(fail_after=2)
        await box.flush(master.send, lambda: True, notice)  # the notice is not taken: still counted
        assert box.dropped == 2 and len(box) == 0
        master.fail_after = 100
        await box.flush(master.send, lambda: False, notice)  # no session: no notice
        assert box.dropped == 2
        await box.flush(master.send, lambda: True, notice)
        assert box.dropped == 0
        await box.flush(master.send, lambda: True, notice)  # nothing more to say
        return master

    master = asyncio.run(main())
    assert master.took == [("event", 1), ("ret", 3), ("event", -2)]
    assert notices == [2, 2]
