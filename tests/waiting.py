"""Waiting in tests on conditions, never on the clock: poll with a deadline, and prove a
subscriber joined before anything it must see is sent. No tests here.

A sleep before an assertion proves nothing (the thing may come later) and costs its full length
on every run; these return as soon as the condition holds and fail with ``what`` when it does not
within ``timeout`` seconds.

ZeroMQ's PUB/SUB (the event bus, the publish channel) drops whatever is published before the
subscription reached the publisher ("slow joiner"). :func:`join_listener` and
:func:`join_subscriber` fire numbered probes until one arrives, then take every probe still in
flight (one sender, one pipe: they arrive in order), so the next message the subscriber gets is the
first one the test sends.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

PROBE_WAIT = 0.05  # seconds between probes


class Deadline:
    """``timeout`` seconds from now; :meth:`check` raises ``error`` (an AssertionError) naming
    ``what`` (and ``detail()``, say the daemons' log tails) once they are over."""

    def __init__(
        self,
        timeout: float,
        what: str,
        detail: Callable[[], str] | None = None,
        error: type[AssertionError] = AssertionError,
    ) -> None:
        self.timeout, self.what, self.detail, self.error = timeout, what, detail, error
        self.end = time.monotonic() + timeout

    def left(self) -> float:
        return self.end - time.monotonic()

    def check(self) -> None:
        if self.left() <= 0:
            extra = f"\n{self.detail()}" if self.detail is not None else ""
            raise self.error(f"timed out after {self.timeout:g} s waiting for {self.what}{extra}")


def wait_until(
    pred: Callable[[], T],
    timeout: float,
    what: str,
    interval: float = 0.01,
    detail: Callable[[], str] | None = None,
    error: type[AssertionError] = AssertionError,
) -> T:
    """Poll ``pred`` until it is truthy (its value); ``error`` naming ``what`` after ``timeout`` s."""
    deadline = Deadline(timeout, what, detail, error)
    while not (value := pred()):
        deadline.check()
        time.sleep(interval)
    return value


async def until(pred: Callable[[], T], timeout: float = 5.0, what: str = "the condition") -> T:
    """:func:`wait_until` for a test running on an event loop (the loop keeps running meanwhile)."""
    deadline = Deadline(timeout, what)
    while not (value := pred()):
        deadline.check()
        await asyncio.sleep(0.01)
    return value


def join_listener(listener: Any, fire: Callable[[str, dict[str, Any]], None], tag: str, timeout: float = 10.0) -> None:
    """Prove an event-bus ``listener`` (``briny.common.event.EventListener`` or anything with its
    ``get_event(timeout)``) receives: fire ``tag`` (which its glob must match) through ``fire``
    (one ``EventSender``: one pipe, so probes keep their order) until something arrives, then one
    last probe, and take everything up to it. Events the listener gets afterwards were all fired
    after this returned; what it got while joining (probes, or a daemon's own events) is dropped."""
    deadline = Deadline(timeout, f"the listener on {tag!r} to receive a probe")
    sent = 0
    while listener.get_event(0) is None:
        deadline.check()
        fire(tag, {"probe": sent})
        sent += 1
        if listener.get_event(PROBE_WAIT) is not None:
            break
    fire(tag, {"probe": sent})  # subscribed now: this one arrives, after everything fired before it
    while True:
        event = listener.get_event(max(0.0, deadline.left()))
        if event is None:
            raise AssertionError(f"the last probe on {tag!r} never arrived after an event did")
        if event[0] == tag and event[1].get("probe") == sent:
            return


async def join_subscriber(
    publish: Callable[[bytes], Awaitable[None]],
    receive: Callable[[], Awaitable[bytes]],
    timeout: float = 10.0,
) -> None:
    """:func:`join_listener` for an asyncio PUB/SUB pair: ``publish(probe)`` sends on the topic the
    subscriber takes, ``receive()`` is its next message there."""
    deadline = Deadline(timeout, "the subscriber to receive a probe")
    sent = 0
    while True:
        deadline.check()
        await publish(b"probe:%d" % sent)
        sent += 1
        try:
            async with asyncio.timeout(PROBE_WAIT):
                await receive()
            break
        except TimeoutError:
            continue
    last = b"probe:%d" % sent
    await publish(last)  # subscribed now: this one arrives, after everything sent before it
    async with asyncio.timeout(max(0.0, deadline.left())):
        while await receive() != last:
            pass
