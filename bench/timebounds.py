#!/usr/bin/env python3
"""How long the calls that must not wait take: the wall-clock bounds the unit tests no longer assert.

A unit test checks what happens (the event is dropped, the call answers None, the children are
gone); how long it takes depends on the machine and its load, so the bounds are measured here
(issue 21). Each case runs once and is compared with its bound:

- ``fire_event`` with no bus socket, three events with a 5 s linger (must not wait the linger): < 2 s;
- ``EventListener.wait_ready(timeout=0.3)`` with no bus: < 2 s;
- ``EventBus.start_thread(timeout=30)`` where the socket cannot be made (two cases): < 10 s;
- ``cmd.run_all(..., timeout=0.3)`` of a shell whose children would run 60 s: < 30 s.

Prints each figure; exits 1 when one is over its bound. Run: ``.venv/bin/python bench/timebounds.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def fire_without_a_bus(tmp: Path) -> None:
    from briny.common.event import fire_event

    for n in range(3):
        fire_event({"sock_dir": str(tmp / "none")}, "x/y", {"a": n}, linger_ms=5000)


def wait_ready_without_a_bus(tmp: Path) -> None:
    from briny.common.event import EventListener

    with EventListener({"sock_dir": str(tmp / "sock")}, "*") as events:
        assert events.wait_ready(timeout=0.3) is False


def bus_that_cannot_start(tmp: Path) -> None:
    from briny.common.event import EventBus
    from briny.common.exceptions import BrinyError

    blocker = tmp / "a-file"
    blocker.write_text("")
    for sock_dir in (blocker / "sock", tmp / ("d" * 120)):
        try:
            EventBus({"sock_dir": str(sock_dir)}).start_thread(timeout=30)
        except BrinyError:
            continue
        raise AssertionError(f"the bus started in {sock_dir}")


def cmd_timeout_with_children(tmp: Path) -> None:
    from briny.common import loader

    opts: dict[str, Any] = {"id": "bench", "file_client": "local", "cachedir": str(tmp)}
    salt = loader.minion_mods(opts, {}, {})
    ret = salt["cmd.run_all"]("sleep 60 & sleep 60; wait", python_shell=True, timeout=0.3)
    assert ret["retcode"] == 1


CASES: list[tuple[str, Callable[[Path], None], float]] = [
    ("fire_event, no bus, 3 x 5 s linger", fire_without_a_bus, 2.0),
    ("wait_ready(0.3), no bus", wait_ready_without_a_bus, 2.0),
    ("EventBus start, bad sock_dir x2", bus_that_cannot_start, 10.0),
    ("cmd.run_all timeout=0.3, children of 60 s", cmd_timeout_with_children, 30.0),
]


def main() -> int:
    over = 0
    for label, case, bound in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.monotonic()
            case(Path(tmp))
            took = time.monotonic() - start
        ok = took < bound
        over += not ok
        print(f"{'ok ' if ok else 'OVER'} {took:7.3f} s  (bound {bound:g} s)  {label}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
