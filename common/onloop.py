"""The daemons' thread rule, checked: objects the asyncio loop owns are touched on the loop only.

The master and the minion each run one asyncio loop; their session tables,
job books and caches in memory belong to it (``docs/DEVELOPING.md``,
"Threads"). Worker threads reach them only through the loop
(``loop.call_soon_threadsafe``, ``asyncio.run_coroutine_threadsafe``), never
directly (:func:`wait_on_loop` and :func:`call_on_loop` are that hand-over, waited for). :func:`assert_on_loop` is the check an owned object makes at the
top of each method that changes it: it raises unless the calling thread is
running an asyncio loop right now (a worker thread of ``run_in_executor``
never is). It costs one C call (about 0.1 µs), so it stays on in
production, and it is an explicit ``raise``, not an ``assert`` statement, so
``python -O`` keeps it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

# the running loop of this thread, or None (C; what asyncio.get_running_loop() reads)
_running_loop = asyncio._get_running_loop


def assert_on_loop(what: str) -> None:
    """Raise AssertionError naming ``what`` and the calling thread unless this thread runs an
    asyncio loop (the loop that owns ``what``: a daemon has one)."""
    if _running_loop() is None:
        raise AssertionError(
            f"{what} belongs to the asyncio loop, but thread {threading.current_thread().name!r} "
            "touched it; hand the work to the loop (loop.call_soon_threadsafe or "
            "asyncio.run_coroutine_threadsafe)"
        )


def wait_on_loop(
    loop: asyncio.AbstractEventLoop | None, coro: Coroutine[Any, Any, T], wait: float, what: str
) -> T | None:
    """From a worker thread: ``coro`` run on ``loop`` (the owner of what it touches), its result
    within ``wait`` seconds; None (and a warning naming ``what``) when the loop is gone or slow,
    and then ``coro`` is closed or cancelled."""
    if loop is None or loop.is_closed():
        coro.close()
        return None
    try:
        future = asyncio.run_coroutine_threadsafe(coro, loop)
    except RuntimeError:  # the loop closed meanwhile
        coro.close()
        return None
    try:
        return future.result(wait)
    except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError, RuntimeError) as exc:
        future.cancel()
        log.warning("%s got no answer: %s", what, str(exc) or type(exc).__name__)
        return None


def call_on_loop(loop: asyncio.AbstractEventLoop | None, fn: Callable[[], T], wait: float, what: str) -> T | None:
    """From a worker thread: ``fn()`` run on ``loop``, its answer within ``wait`` seconds; None
    (and a warning naming ``what``) when the loop is gone or slow (:func:`wait_on_loop`)."""

    async def on_loop() -> T:
        return fn()

    return wait_on_loop(loop, on_loop(), wait, what)
