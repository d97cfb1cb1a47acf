"""The master's job book and session table (master/jobbook.py, master/sessions.py): pure
bookkeeping with an injected clock, owned by the loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any

import pytest

from briny.master.jobbook import JOB_MEMORY, PENDING_MIN, RESEND_AFTER, JobBook
from briny.master.sessions import SessionTable


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def on_loop(body):
    async def main():
        return body()

    return asyncio.run(main())


def load(jid: str, timeout: float = 5) -> dict[str, Any]:
    return {"jid": jid, "fun": "test.ping", "timeout": timeout}


def test_a_publish_waits_for_its_minion_until_its_deadline():
    clock = Clock()
    book = JobBook(clock)

    def body() -> None:
        book.wait("m1", load("j1"), clock.now + PENDING_MIN)
        book.wait("m1", load("j2"), clock.now + 1)
        assert book.waiting("m1") == ["j1", "j2"]
        clock.now += 2  # j2's deadline passed
        assert [p["jid"] for p in book.take_pending("m1")] == ["j1"]
        assert book.take_pending("m1") == [] and book.waiting("m1") == []
        book.wait("m2", load("j3"), clock.now + 1)
        book.drop_pending("m2")
        assert book.take_pending("m2") == []

    on_loop(body)


def test_requeue_hands_back_what_a_minion_missed_since_it_was_last_heard():
    clock = Clock()
    book = JobBook(clock)

    def body() -> None:
        book.add("old", "test.ping", ["m1"], True, load("old"))  # sent while m1 was alive
        heard = clock.now + 1
        clock.now += 2
        book.add("done", "test.ping", ["m1"], True, load("done"))
        book.returned("done", "m1")
        book.add("other", "test.ping", ["m2"], True, load("other"))
        book.add("state", "state.apply", ["m1"], True, load("state", timeout=60))
        book.compiled("state", "m1", {**load("state", timeout=60), "compiled": {"x": 1}})
        book.add("late", "test.ping", ["m1"], True, load("late"))
        book.requeue("m1", heard)
        assert book.waiting("m1") == ["state", "late"]
        book.requeue("m1", heard)  # twice: nothing queued twice
        assert book.waiting("m1") == ["state", "late"]
        clock.now += PENDING_MIN + 1  # "late" (timeout 5) is past its deadline; "state" (60) is not
        assert book.take_pending("m1") == [{**load("state", timeout=60), "compiled": {"x": 1}}]
        book.requeue("m3", heard)  # nothing for it: no empty entry left behind
        assert book.waiting("m3") == []

    on_loop(body)


def test_jobs_and_local_calls_expire():
    clock = Clock()
    book = JobBook(clock)

    def body() -> None:
        book.add("j1", "test.ping", ["m1"], True, load("j1"))
        book.remember_local("m1", "local1", "j2")
        book.wait("m1", load("j1"), clock.now + PENDING_MIN)
        assert "j1" in book and book.local_jid("m1", "local1") == "j2"
        clock.now += JOB_MEMORY + 1
        book.expire()
        assert "j1" not in book and book.local_jid("m1", "local1") is None and book.waiting("m1") == []

    on_loop(body)


def test_sessions_open_replace_drop_and_keep_only_the_accepted():
    clock = Clock()
    table = SessionTable(clock)

    def body() -> None:
        assert table.open("m1", b"k" * 32, b"peer1", clock.now) is None
        clock.now += 5
        heard = clock.now
        table.heard(table["m1"], b"peer2")
        assert table["m1"].peer == b"peer2"
        clock.now += 5
        assert table.open("m1", b"K" * 32, b"peer3", clock.now) == heard  # replaced: last heard
        assert table.open("m2", b"k" * 32, b"peer", clock.now) is None
        read_at = clock.now + 1
        clock.now += 2
        table.open("m3", b"k" * 32, b"peer", clock.now)  # its auth read a newer key store
        assert table.keep_only(frozenset({"m2"}), read_at) == ["m1"]
        assert "m1" not in table and "m2" in table and "m3" in table
        assert table.connected(window=3) == ["m2", "m3"]
        clock.now += 10
        assert table.connected(window=3) == []
        assert table.drop("m2", "test") and not table.drop("m2", "test")
        table.forget("m1")
        assert "m1" not in table.last_seen

    on_loop(body)


def test_the_book_and_the_table_refuse_a_worker_thread():
    book, table = JobBook(), SessionTable()

    async def main() -> None:
        table.open("m1", b"k" * 32, b"peer", 0.0)
        loop = asyncio.get_running_loop()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            for what, call in (
                ("the master's job book", lambda: book.add("j1", "f", ["m1"], True, load("j1"))),
                ("the master's job book", lambda: book.wait("m1", load("j1"), 0.0)),
                ("the master's job book", lambda: book.requeue("m1", 0.0)),
                ("the master's job book", book.expire),
                ("the master's session table", lambda: table.open("m2", b"k" * 32, b"p", 0.0)),
                ("the master's session table", lambda: table.drop("m1", "x")),
                ("the master's session table", lambda: table.keep_only(frozenset(), 1.0)),
            ):
                with pytest.raises(AssertionError, match=what):
                    await loop.run_in_executor(pool, call)
        assert "m1" in table and "m2" not in table and "j1" not in book

    asyncio.run(main())


def test_per_minion_compiles_are_let_go_once_returned_or_too_old_to_hand_again():
    """A state job's compile per minion is kept only while it may be handed again (issue 13:
    at 5,000 minions, kept for the hour of JOB_MEMORY, they were the master's largest memory)."""
    clock = Clock()
    book = JobBook(clock)

    def body() -> None:
        book.add("j1", "state.apply", ["m1", "m2"], True, {**load("j1", timeout=30), "fun": "state.apply"})
        for minion_id in ("m1", "m2"):
            book.compiled("j1", minion_id, {"jid": "j1", "compiled": {"chunks": [{"id": minion_id}]}})
        book.returned("j1", "m1")
        job = book.get("j1")
        assert job is not None and set(job.loads) == {"m2"}
        # m2 comes back within the job's timeout: it is handed its own compile
        book.requeue("m2", clock.now - 1)
        assert [p["compiled"]["chunks"][0]["id"] for p in book.take_pending("m2")] == ["m2"]
        clock.now += 31  # past the job's pending deadline: nothing would hand it again
        book.expire()
        assert job.loads == {} and book.get("j1") is job  # the job itself is remembered still

    on_loop(body)


def test_a_ping_hands_again_the_jobs_sent_and_not_returned_while_they_are_fresh():
    """ZeroMQ may drop a publish (pub_hwm): what was sent to a minion and not returned goes to it
    again on its ping, once RESEND_AFTER old; not once returned, nor past its deadline."""
    clock = Clock()
    book = JobBook(clock)

    def body() -> None:
        for jid in ("j1", "j2", "j3"):
            book.add(jid, "test.ping", ["m1", "m2"], True, load(jid))
            book.sent("m1", jid)
            book.sent("m2", jid)
        book.resend("m1")
        assert book.waiting("m1") == []  # just sent: it may be on its way
        clock.now += RESEND_AFTER
        book.returned("j1", "m1")
        book.resend("m1")
        assert book.waiting("m1") == ["j2", "j3"]
        book.resend("m1")  # queued once
        assert book.take_pending("m1") == [load("j2"), load("j3")]
        book.returned("j2", "m2")
        book.returned("j3", "m2")
        book.returned("j1", "m2")
        book.resend("m2")
        assert book.waiting("m2") == [] and "m2" not in book._sent
        clock.now += PENDING_MIN  # too old to be worth running now
        book.resend("m1")
        assert book.waiting("m1") == [] and "m1" not in book._sent
        book.add("j4", "test.ping", ["m1"], True, load("j4"))
        book.sent("m1", "j4")
        clock.now += PENDING_MIN + 1
        book.expire()
        assert book._sent == {}

    on_loop(body)
