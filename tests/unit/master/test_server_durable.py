"""A job's row is committed before its publish goes out (issue 13): a master killed right after a
publish keeps the job, so the minions' returns are taken when it is back. Over the in-memory
transport, with the job cache's writer held up by a gate; :func:`briny.master.jobcache.base.committed`
on its own for the database-away and failed-write cases."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from briny.common.exceptions import JobCacheError
from briny.master.jobcache.base import committed
from briny.master.jobcache.sqlite import SqliteJobCache

from .test_server import Ctx, run_master


def _hold_writer(cache: SqliteJobCache, gate: threading.Event) -> None:
    """Queue a write that keeps the writer thread busy until ``gate`` is set."""
    cache._submit(lambda conn: gate.wait(20))


def test_the_publish_waits_for_the_job_row(master_opts: dict[str, Any]) -> None:
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        gate = threading.Event()
        _hold_writer(c.cache, gate)
        publishing = asyncio.ensure_future(c.server.publisher.publish("m1", "glob", "test.sleep", [30]))
        await c.no_publish(m1)  # the master is idle: nothing went out while the row is not written
        assert not publishing.done()
        assert not [t for t in c.tags() if t.startswith("salt/job/")]
        gate.set()
        res = await publishing
        # the row is readable (committed) by the time the publish is answered, before any flush
        assert c.cache.targeted(res["jid"], "m1") is True
        pub = await m1.next_pub()
        assert pub is not None and pub["jid"] == res["jid"]

    run_master(master_opts, body)


def test_a_return_is_answered_once_it_is_committed(master_opts: dict[str, Any]) -> None:
    """The minion forgets a return the master took: the answer waits for the commit (the loop does
    not: other requests are served meanwhile)."""
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        res = await c.server.publisher.publish("m1", "glob", "test.ping")
        assert (await m1.next_pub()) is not None
        gate = threading.Event()
        _hold_writer(c.cache, gate)
        returning = asyncio.ensure_future(
            m1.req("ret", jid=res["jid"], fun="test.ping", fun_args=[], **{"return": True})
        )
        await asyncio.sleep(0)  # one loop turn: the task sends its frame before the ping
        try:
            assert (await m1.req("ping"))[0] == "rep"  # handled after the return (in order): the loop serves on
            assert not returning.done()  # (the answer would go after RETURN_WAIT, 1 s, at the latest)
            assert f"salt/job/{res['jid']}/ret/m1" in c.tags()  # the event is not held up
        finally:
            gate.set()
        assert await returning == ("rep", {"ok": True})
        assert c.cache.get_returns(res["jid"]) == {"m1": {"return": True}}  # committed, before any flush

    run_master(master_opts, body)


def test_a_return_after_a_restart_is_taken_for_a_committed_job(master_opts: dict[str, Any]) -> None:
    """What a master back from a kill sees: no job book entry, only the committed row."""
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        res = await c.server.publisher.publish("m1", "glob", "test.ping")
        assert (await m1.next_pub()) is not None
        c.server.jobs = type(c.server.jobs)()  # the restarted master's empty job book
        c.server.trust.book = c.server.publisher.jobs = c.server.jobs
        kind, rep = await m1.req("ret", jid=res["jid"], fun="test.ping", fun_args=[], **{"return": True})
        assert (kind, rep) == ("rep", {"ok": True})
        c.cache.flush()
        assert c.cache.get_returns(res["jid"]) == {"m1": {"return": True}}

    run_master(master_opts, body)


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[SqliteJobCache]:
    with SqliteJobCache(str(tmp_path / "jobs.sqlite")) as jobs:
        yield jobs


def test_committed_waits_for_the_writer(cache: SqliteJobCache) -> None:
    async def main() -> None:
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        waiting = asyncio.ensure_future(committed(cache, done, "1"))
        await asyncio.sleep(0)
        assert not waiting.done()
        threading.Thread(target=done.set_result, args=(None,)).start()  # the writer thread commits
        await asyncio.wait_for(waiting, 5)

    asyncio.run(main())


def test_committed_does_not_wait_while_the_database_is_away(
    cache: SqliteJobCache, caplog: pytest.LogCaptureFixture
) -> None:
    cache._degraded = True  # what the writer says while it cannot reach the database
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()  # never resolved: buffered
    with caplog.at_level(logging.WARNING, "briny.master.jobcache.base"):
        asyncio.run(asyncio.wait_for(committed(cache, done, "job 20261124060000000001"), 5))
    assert "job 20261124060000000001 is not committed yet (the job cache database is unreachable)" in caplog.text


def test_committed_gives_up_waiting_after_its_bound(cache: SqliteJobCache, caplog: pytest.LogCaptureFixture) -> None:
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()
    with caplog.at_level(logging.WARNING, "briny.master.jobcache.base"):
        asyncio.run(asyncio.wait_for(committed(cache, done, "2", wait=0.05), 5))
    assert "2 is not committed yet (the job cache did not commit it within 0.05 s)" in caplog.text


def test_a_failed_job_write_is_an_error(cache: SqliteJobCache) -> None:
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()
    done.set_exception(ValueError("disk full"))
    with pytest.raises(JobCacheError, match="disk full"):
        asyncio.run(committed(cache, done, "3"))
