"""The schedule's calendar timing (issue 12): cron, date strings, when/once/range/after/until,
skip_during_range, run_explicit/skip_explicit, driven by an injected clock (no test sleeps)."""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from briny.common import cron, datestr
from briny.common.exceptions import ConfigError
from briny.common.schedentry import parse_entry
from briny.common.schedule import Schedule

TUESDAY = dt.datetime(2026, 11, 24, 6, 0, 0)  # a Tuesday, 06:00 local


class Clock:
    """One fake clock for both of the schedule's: monotonic and wall (epoch seconds)."""

    def __init__(self, start: dt.datetime = TUESDAY) -> None:
        self.now = start.timestamp()

    def __call__(self) -> float:
        return self.now

    def at(self, moment: dt.datetime) -> None:
        self.now = moment.timestamp()

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make(clock: Clock, schedule: dict) -> Schedule:
    sched = Schedule(clock, lambda a, b: b, wall=clock)
    assert sched.load(schedule) == {}
    return sched


def ran(sched: Schedule) -> list[str]:
    out = [e.name for e in sched.due()]
    for name in out:
        sched.finished(name)
    return out


@pytest.mark.parametrize(
    "expr, after, expected",
    [
        ("*/15 * * * *", "2026-11-24T06:01:00", ["2026-11-24T06:15:00", "2026-11-24T06:30:00"]),
        ("0 9 * * mon-fri", "2026-11-27T10:00:00", ["2026-11-30T09:00:00", "2026-12-01T09:00:00"]),
        ("30 2 1 * *", "2026-11-24T00:00:00", ["2026-12-01T02:30:00", "2027-01-01T02:30:00"]),
        ("0 0 29 2 *", "2026-01-01T00:00:00", ["2028-02-29T00:00:00", "2032-02-29T00:00:00"]),
        ("0 0 1 * 1", "2026-11-24T00:00:00", ["2026-11-30T00:00:00", "2026-12-01T00:00:00"]),  # day OR weekday
        ("0 12 * jan,jul sun", "2026-11-24T00:00:00", ["2027-01-03T12:00:00", "2027-01-10T12:00:00"]),
        ("0 0 * * 7", "2026-11-24T00:00:00", ["2026-11-29T00:00:00", "2026-12-06T00:00:00"]),  # 7: Sunday
        ("5-10/5 * * * *", "2026-11-24T06:06:00", ["2026-11-24T06:10:00", "2026-11-24T07:05:00"]),
        ("@hourly", "2026-11-24T06:00:00", ["2026-11-24T07:00:00", "2026-11-24T08:00:00"]),
        ("* * * * * */20", "2026-11-24T06:00:00", ["2026-11-24T06:00:20", "2026-11-24T06:00:40"]),
    ],
)
def test_cron_next_times(expr, after, expected):
    parsed = cron.parse(expr)
    moment = dt.datetime.fromisoformat(after)
    got = []
    for _ in expected:
        found = parsed.next_after(moment)
        assert found is not None
        got.append(datestr.fmt(found))
        moment = found
    assert got == expected


def test_cron_that_never_matches_has_no_next_time():
    assert cron.parse("0 0 31 2 *").next_after(TUESDAY) is None


@pytest.mark.parametrize(
    "expr, message",
    [
        ("* * * *", "has 4 fields"),
        ("60 * * * *", "minute 60 is out of range 0-59"),
        ("* 24 * * *", "hour 24 is out of range 0-23"),
        ("* * 0 * *", "day of month 0 is out of range 1-31"),
        ("* * * 13 *", "month 13 is out of range 1-12"),
        ("* * * foo *", "'foo' is not a valid month value"),
        ("*/0 * * * *", "step '0'"),
        ("10-5 * * * *", "ends before it starts"),
        ("0 0 L * *", "extension 'L'"),
        ("0 0 * * 5#3", "extension '#'"),
        ("0 0 ? * *", "extension '?'"),
        ("@reboot", "briny knows the macros"),
        ("", "must be a cron expression"),
        (5, "must be a cron expression"),
    ],
)
def test_bad_cron_expressions_say_what_is_wrong(expr, message):
    with pytest.raises(ConfigError, match=message.replace("?", r"\?")):
        cron.parse(expr)


@pytest.mark.parametrize(
    "text, on, following",
    [
        ("5:00pm", "2026-11-24T17:00:00", "2026-11-24T17:00:00"),
        ("5pm", "2026-11-24T17:00:00", "2026-11-24T17:00:00"),
        ("5:30 PM", "2026-11-24T17:30:00", "2026-11-24T17:30:00"),
        ("05:00", "2026-11-24T05:00:00", "2026-11-25T05:00:00"),
        ("12:15am", "2026-11-24T00:15:00", "2026-11-25T00:15:00"),
        ("12pm", "2026-11-24T12:00:00", "2026-11-24T12:00:00"),
        ("Monday 5:00pm", "2026-11-30T17:00:00", "2026-11-30T17:00:00"),
        ("tue 05:00", "2026-11-24T05:00:00", "2026-12-01T05:00:00"),
        ("5pm Friday", "2026-11-27T17:00:00", "2026-11-27T17:00:00"),
        ("Wednesday", "2026-11-25T00:00:00", "2026-11-25T00:00:00"),
        ("2026-11-24T17:00:00", "2026-11-24T17:00:00", "2026-11-24T17:00:00"),
        ("2026-11-24 03:00", "2026-11-24T03:00:00", None),
        ("2026-12-25", "2026-12-25T00:00:00", "2026-12-25T00:00:00"),
        ("11/25/2026 5:00pm", "2026-11-25T17:00:00", "2026-11-25T17:00:00"),
    ],
)
def test_date_strings(text, on, following):
    spec = datestr.parse(text)
    assert datestr.fmt(spec.on(TUESDAY)) == on
    nxt = spec.next_at_or_after(TUESDAY)
    assert (datestr.fmt(nxt) if nxt else None) == following


@pytest.mark.parametrize("text", ["tomorrow", "Nov 24", "5", "noon", "13pm", "25:00", "24/11/2026", "", None, 5])
def test_refused_date_strings_name_the_accepted_forms(text):
    with pytest.raises(ConfigError, match="ISO 8601|MM/DD/YYYY"):
        datestr.parse(text)


def test_iso_with_an_offset_is_read_in_local_time():
    spec = datestr.parse("2026-11-24T17:00:00+00:00")
    assert spec.at == dt.datetime(2026, 11, 24, 17, 0, tzinfo=dt.timezone.utc).astimezone().replace(tzinfo=None)


def test_when_runs_at_each_time_every_day_and_not_late():
    clock = Clock()
    sched = make(clock, {"w": {"function": "test.ping", "when": ["7:00am", "5:00am"]}})
    assert ran(sched) == []  # 05:00 had passed at the start: not run late
    assert sched.next_fire_time("w") == dt.datetime(2026, 11, 24, 7, 0)
    assert sched.seconds_to_next() == 60.0  # calendar entries are checked at least every minute
    clock.at(dt.datetime(2026, 11, 24, 6, 59, 59))
    assert ran(sched) == []
    clock.at(dt.datetime(2026, 11, 24, 7, 0, 0))
    assert ran(sched) == ["w"]
    assert ran(sched) == []
    assert sched.next_fire_time("w") == dt.datetime(2026, 11, 25, 5, 0)
    clock.at(dt.datetime(2026, 11, 25, 5, 0, 1))
    assert ran(sched) == ["w"]


def test_cron_entry_runs_on_its_minutes_and_missed_runs_make_one():
    clock = Clock()
    sched = make(clock, {"c": {"function": "test.ping", "cron": "*/10 * * * *"}})
    assert sched.next_fire_time("c") == dt.datetime(2026, 11, 24, 6, 0)  # now matches: it runs now
    assert ran(sched) == ["c"]
    clock.at(dt.datetime(2026, 11, 24, 6, 9, 59))
    assert ran(sched) == []
    clock.at(dt.datetime(2026, 11, 24, 6, 45, 0))  # four runs missed: one run
    assert ran(sched) == ["c"] and ran(sched) == []
    assert sched.next_fire_time("c") == dt.datetime(2026, 11, 24, 6, 50)


def test_once_runs_once_and_a_past_once_never():
    clock = Clock()
    sched = make(
        clock,
        {
            "o": {"function": "test.ping", "once": "2026-11-24T06:00:30"},
            "p": {"function": "test.ping", "once": "24/11/2026 05:00", "once_fmt": "%d/%m/%Y %H:%M"},
        },
    )
    assert sched.next_fire_time("p") is None
    clock.advance(30)
    assert ran(sched) == ["o"]
    clock.advance(3600)
    assert ran(sched) == [] and sched.next_fire_time("o") is None


def test_splay_delays_a_calendar_run():
    clock = Clock()
    sched = make(clock, {"s": {"function": "test.ping", "cron": "1 6 * * *", "splay": {"start": 5, "end": 10}}})
    clock.at(dt.datetime(2026, 11, 24, 6, 1, 9))
    assert ran(sched) == []
    clock.advance(1)
    assert ran(sched) == ["s"]


@pytest.mark.parametrize(
    "options, runs_at",
    [
        ({"range": {"start": "6:00am", "end": "6:00:05am"}}, [1, 2, 3, 4, 5]),
        ({"range": {"start": "6:00am", "end": "6:00:05am", "invert": True}}, [6, 7, 8]),
        ({"skip_during_range": {"start": "6:00:02am", "end": "6:00:06am"}}, [1, 7, 8]),
        ({"skip_during_range": {"start": "6:00:02am", "end": "6:00:06am"}, "run_after_skip_range": True}, [1, 7, 8]),
        ({"after": "6:00:05am"}, [6, 7, 8]),
        ({"until": "2026-11-24T06:00:03"}, [1, 2]),
        ({"skip_explicit": [{"time": "2026-11-24T06:00:04", "time_fmt": "%Y-%m-%dT%H:%M:%S"}]}, [1, 2, 3, 5, 6, 7, 8]),
        ({"enabled": False}, []),
    ],
)
def test_date_checks_skip_runs_of_an_interval_entry(options, runs_at):
    clock = Clock()
    sched = make(clock, {"e": {"function": "test.ping", "seconds": 1, **options}})
    seen = []
    for second in range(1, 9):
        clock.advance(1)
        if ran(sched):
            seen.append(second)
    assert seen == runs_at


def test_run_after_skip_range_runs_once_when_the_range_ends():
    clock = Clock()
    sched = make(
        clock,
        {
            "e": {
                "function": "test.ping",
                "minutes": 10,
                "skip_during_range": {"start": "6:05am", "end": "6:12am"},
                "run_after_skip_range": True,
            }
        },
    )
    clock.at(dt.datetime(2026, 11, 24, 6, 10))
    assert ran(sched) == []  # inside the range: skipped, and a run set for its end
    assert sched.next_fire_time("e") == dt.datetime(2026, 11, 24, 6, 12, 1)
    clock.at(dt.datetime(2026, 11, 24, 6, 12, 1))
    assert ran(sched) == ["e"]
    clock.at(dt.datetime(2026, 11, 24, 6, 15))
    assert ran(sched) == []
    clock.at(dt.datetime(2026, 11, 24, 6, 20))
    assert ran(sched) == ["e"]


def test_global_skip_during_range_and_run_on_start_is_not_checked():
    clock = Clock()
    sched = make(
        clock,
        {
            "skip_during_range": {"start": "5:00am", "end": "7:00am"},
            "e": {"function": "test.ping", "seconds": 1, "run_on_start": True},
        },
    )
    assert ran(sched) == ["e"]  # run_on_start: not checked against the range
    clock.advance(1)
    assert ran(sched) == []
    clock.at(dt.datetime(2026, 11, 24, 7, 0, 1))
    assert ran(sched) == ["e"]


def test_postpone_and_skip_move_single_runs():
    clock = Clock()
    sched = make(clock, {"e": {"function": "test.ping", "minutes": 1}})
    sched.postpone("e", dt.datetime(2026, 11, 24, 6, 1), dt.datetime(2026, 11, 24, 6, 1, 30))
    sched.skip("e", dt.datetime(2026, 11, 24, 6, 2))
    clock.at(dt.datetime(2026, 11, 24, 6, 1))
    assert ran(sched) == []  # postponed ...
    assert sched.next_fire_time("e") == dt.datetime(2026, 11, 24, 6, 1, 30)
    clock.at(dt.datetime(2026, 11, 24, 6, 1, 30))
    assert ran(sched) == ["e"]  # ... to here
    clock.at(dt.datetime(2026, 11, 24, 6, 2))
    assert ran(sched) == []  # skipped
    clock.at(dt.datetime(2026, 11, 24, 6, 3))
    assert ran(sched) == ["e"]
    assert {"time": "2026-11-24T06:02:00", "time_fmt": "%Y-%m-%dT%H:%M:%S"} in sched.entries["e"].raw["skip_explicit"]


def test_unknown_keys_warn_naming_the_key(caplog):
    with caplog.at_level(logging.WARNING):
        entry = parse_entry("u", {"function": "test.ping", "cron": "* * * * *", "cronn": 1})
    assert entry.cron is not None and "unknown option(s) cronn" in caplog.text


def test_global_keys_are_not_entries_and_bad_ones_are_refused_by_name(caplog):
    clock = Clock()
    sched = Schedule(clock, wall=clock)
    with caplog.at_level(logging.WARNING):
        refused = sched.load(
            {
                "enabled": False,
                "loop_interval": 1,
                "skip_during_range": 5,
                "splay": {"function": "test.ping", "seconds": 1},  # an entry that happens to be named splay
            }
        )
    assert sched.enabled is False and list(sched.entries) == ["splay"]
    assert "'skip_during_range' must be a mapping with 'start' and 'end'" in refused["skip_during_range"]
    assert "the global option 'loop_interval' is not supported by briny" in caplog.text


@pytest.mark.parametrize("expr", ["*/7 * * * *", "5,35 */3 * * *", "0-10/4 22-23 * * *", "59 23 * * sun", "1 0 25 * *"])
def test_cron_agrees_with_a_minute_by_minute_scan(expr):
    parsed = cron.parse(expr)
    start = dt.datetime(2026, 11, 20, 21, 58, 30)
    scan = start.replace(second=0) + dt.timedelta(minutes=1)
    found = []
    while len(found) < 6:
        if (
            scan.minute in parsed.minutes
            and scan.hour in parsed.hours
            and scan.month in parsed.months
            and parsed.day_matches(scan.date())
        ):
            found.append(scan)
        scan += dt.timedelta(minutes=1)
    got, moment = [], start
    for _ in found:
        moment = parsed.next_after(moment)
        got.append(moment)
    assert got == found
