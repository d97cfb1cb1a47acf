"""assert_on_loop (common/onloop.py): silent on the loop, loud anywhere else."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from briny.common.onloop import assert_on_loop


def test_passes_on_the_loop_and_fails_in_its_workers():
    async def main() -> None:
        assert_on_loop("the table")  # the loop's own thread: fine
        loop = asyncio.get_running_loop()
        with pytest.raises(AssertionError, match=r"the table belongs to the asyncio loop.*thread 'briny-test"):
            await loop.run_in_executor(pool, assert_on_loop, "the table")

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="briny-test") as pool:
        asyncio.run(main())


def test_fails_in_a_plain_thread_and_with_no_loop_at_all():
    with pytest.raises(AssertionError, match="MainThread"):
        assert_on_loop("the book")
    failures: list[BaseException] = []

    def worker() -> None:
        try:
            assert_on_loop("the book")
        except AssertionError as exc:
            failures.append(exc)

    thread = threading.Thread(target=worker, name="stray")
    thread.start()
    thread.join(5)
    assert not thread.is_alive()
    assert len(failures) == 1 and "'stray'" in str(failures[0])


def test_wait_on_loop_gives_the_answer_or_none_and_never_leaves_the_coroutine_behind(caplog):
    from briny.common.onloop import wait_on_loop

    stop_slow = asyncio.Event()
    cancelled = asyncio.Event()

    async def answer() -> str:
        assert_on_loop("the table")
        return "done"

    async def slow() -> None:
        try:
            await stop_slow.wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def main() -> None:
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(pool, wait_on_loop, loop, answer(), 5.0, "answer") == "done"
        with caplog.at_level("WARNING", logger="briny.common.onloop"):
            assert await loop.run_in_executor(pool, wait_on_loop, loop, slow(), 0.05, "the slow one") is None
        assert "the slow one got no answer: TimeoutError" in caplog.text
        await asyncio.wait_for(cancelled.wait(), 5)  # the slow coroutine was cancelled, not left running

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        asyncio.run(main())
    gone = answer()
    assert wait_on_loop(None, gone, 1.0, "no loop") is None
    assert gone.cr_frame is None  # closed: no "never awaited" warning
