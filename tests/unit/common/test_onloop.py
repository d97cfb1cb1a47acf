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
