"""The live progress lines of ``briny`` on a terminal: drawn, updated in place, cleared before
every output, never on a stream that is not a terminal; and the minion side's progress events
(minimal data, running totals, rate limit)."""

from __future__ import annotations

import argparse
import io
import re
from typing import Any

from briny.master.liveview import LiveView
from briny.master.opcli import _is_tty
from briny.master.opresults import Printer
from briny.master.waiter import Waiter
from briny.minion.progress import ProgressEvents

JID = "20240101000000000001"
CSI = re.compile(r"\x1b\[(\d*)([FJ])")


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def screen(text: str) -> list[str]:
    """What a terminal shows after ``text`` (only the cursor-up-to-column-0 and clear-below codes)."""
    lines = [""]
    row = 0
    pos = 0
    for m in CSI.finditer(text):
        row = _put(lines, row, text[pos : m.start()])
        if m.group(2) == "F":
            row = max(0, row - int(m.group(1) or 1))
            lines[row] = ""
        else:  # J: clear from the cursor to the end of the screen
            del lines[row + 1 :]
            lines[row] = ""
        pos = m.end()
    _put(lines, row, text[pos:])
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def _put(lines: list[str], row: int, chunk: str) -> int:
    for i, part in enumerate(chunk.split("\n")):
        if i:
            row += 1
            if row == len(lines):
                lines.append("")
        lines[row] += part
    return row


def prog(minion: str, n: int, total: int, failed: int = 0, result: bool = True) -> tuple[str, dict[str, Any]]:
    return (
        f"salt/job/{JID}/prog/{minion}/{n}",
        {
            "ret": {"__run_num__": n, "result": result, "name": f"s{n}", "__id__": f"s{n}"},
            "len": total,
            "done": n + 1,
            "failed": failed,
            "id": minion,
            "jid": JID,
        },
    )


def ret(minion: str) -> tuple[str, dict[str, Any]]:
    state = {
        "test_|-a_|-a_|-nop": {
            "result": True,
            "changes": {},
            "comment": "ok",
            "name": "a",
            "__id__": "a",
            "__run_num__": 0,
            "__sls__": "x",
            "duration": 1.0,
            "start_time": "00:00:00.000000",
        }
    }
    return (
        f"salt/job/{JID}/ret/{minion}",
        {
            "jid": JID,
            "id": minion,
            "fun": "state.apply",
            "return": state,
            "retcode": 0,
            "success": True,
            "out": "highstate",
        },
    )


class Script:
    """A listener that hands out a fixed list of events, and snapshots the screen at each one."""

    def __init__(self, events: list[tuple[str, dict[str, Any]]], stream: io.StringIO) -> None:
        self.events = list(events)
        self.stream = stream
        self.screens: list[list[str]] = []

    def get_event(self, timeout: float | None = None) -> tuple[str, dict[str, Any]] | None:
        self.screens.append(screen(self.stream.getvalue()))
        return self.events.pop(0) if self.events else None


def drive(stream: io.StringIO, events: list[tuple[str, dict[str, Any]]], live: bool, static: bool = False) -> Script:
    ns = argparse.Namespace(out=None, static=static)
    opts = {"color": False, "no_color": True, "state_output": "terse", "state_verbose": True}
    printer = Printer(ns, opts, "state.apply", stream)
    script = Script(events, stream)
    waiter = Waiter(client=None, listener=script, opts=opts, timeout=60, gather_timeout=10)  # type: ignore[arg-type]
    if live:
        printer.live = LiveView(stream, interval=0.0)
        waiter.on_progress = printer.progress
    waiter.add_job(JID, "state.apply", ["m1", "m2"])
    while waiter.active:
        for res in waiter.poll(0.01):
            printer.result(res)
        printer.tick()
    printer.finish()
    script.screens.append(screen(stream.getvalue()))
    return script


EVENTS = [
    prog("m1", 0, 3),
    prog("m2", 0, 2),
    prog("m1", 1, 3, failed=1, result=False),
    prog("m2", 1, 2),
    ret("m2"),
    prog("m1", 2, 3, failed=1),
    ret("m1"),
]


def test_live_lines_update_in_place_and_leave_only_the_normal_output():
    tty = FakeTTY()
    script = drive(tty, EVENTS, live=True)
    plain = io.StringIO()
    drive(plain, EVENTS, live=False)
    shown = script.screens
    assert ["m1: 1/3 states, 0 failed"] in shown
    assert ["m1: 1/3 states, 0 failed", "m2: 1/2 states, 0 failed"] in shown
    assert ["m1: 2/3 states, 1 failed", "m2: 2/2 states, 0 failed"] in shown
    # m2 returned: its output is printed, m1's live line is drawn again below it
    after_m2 = next(s for s in shown if s and s[0].startswith("m2:") and len(s) > 2)
    assert after_m2[-1] == "m1: 2/3 states, 1 failed" and not any(l.startswith("m2: ") for l in after_m2)
    # the final screen is exactly what a pipe gets: no live line left
    assert shown[-1] == screen(plain.getvalue())
    assert not any(re.match(r"m\d: \d+/\d+ states", line) for line in shown[-1])
    assert "\x1b[" not in plain.getvalue()


def test_static_output_comes_after_the_lines_are_cleared():
    tty = FakeTTY()
    script = drive(tty, EVENTS, live=True, static=True)
    plain = io.StringIO()
    drive(plain, EVENTS, live=False, static=True)
    assert ["m1: 3/3 states, 1 failed"] in script.screens  # m2 gone once it returned
    assert script.screens[-1] == screen(plain.getvalue())


def test_progress_only_on_a_terminal():
    assert _is_tty(FakeTTY()) and not _is_tty(io.StringIO())


def test_liveview_throttles_and_counts_without_running_totals():
    now = [0.0]
    out = FakeTTY()
    view = LiveView(out, interval=1.0, clock=lambda: now[0])
    view.update("m1", {"ret": {"__run_num__": 0, "result": False}, "len": 4})  # Salt's data: no totals
    assert screen(out.getvalue()) == ["m1: 1/4 states, 1 failed"]
    view.update("m1", {"ret": {"__run_num__": 1, "result": True}, "len": 4})
    assert screen(out.getvalue()) == ["m1: 1/4 states, 1 failed"]  # throttled
    now[0] = 2.0
    view.tick()
    assert screen(out.getvalue()) == ["m1: 2/4 states, 1 failed"]
    view.forget_all()
    assert screen(out.getvalue()) == []


def test_progress_events_are_minimal_with_totals_and_rate_limited():
    sent: list[tuple[str, dict[str, Any]]] = []
    now = [0.0]
    pe = ProgressEvents(lambda t, d: sent.append((t, d)), burst=3, rate=1.0, clock=lambda: now[0])
    full = {
        "result": True,
        "name": "n",
        "__id__": "i",
        "__sls__": "s",
        "__run_num__": 0,
        "duration": 1.5,
        "changes": {"diff": "x" * 1000},
        "comment": "long",
        "start_time": "t",
    }
    pe(f"salt/job/{JID}/prog/m1/0", {"ret": full, "len": 10})
    assert sent == [
        (
            f"salt/job/{JID}/prog/m1/0",
            {
                "ret": {"result": True, "name": "n", "__id__": "i", "__sls__": "s", "__run_num__": 0, "duration": 1.5},
                "len": 10,
                "done": 1,
                "failed": 0,
            },
        )
    ]
    # a fire_event state's own event passes through untouched and counts
    pe(f"salt/state_result/{JID}/m1/x", {"ret": {**full, "result": False}})
    assert sent[-1] == (f"salt/state_result/{JID}/m1/x", {"ret": {**full, "result": False}})
    for n in range(2, 8):
        pe(f"salt/job/{JID}/prog/m1/{n}", {"ret": {**full, "__run_num__": n}, "len": 10})
    progs = [t for t, _ in sent if "/prog/" in t]
    assert progs == [f"salt/job/{JID}/prog/m1/{n}" for n in (0, 2, 3)]  # burst of 3, then held
    now[0] = 1.0
    pe(f"salt/job/{JID}/prog/m1/8", {"ret": {**full, "__run_num__": 8}, "len": 10})
    pe(f"salt/job/{JID}/prog/m1/9", {"ret": {**full, "__run_num__": 9}, "len": 10})
    pe.flush()
    tags = [t for t, _ in sent if "/prog/" in t]
    assert tags[-2:] == [f"salt/job/{JID}/prog/m1/8", f"salt/job/{JID}/prog/m1/9"]
    assert sent[-1][1]["done"] == 10 and sent[-1][1]["failed"] == 1
