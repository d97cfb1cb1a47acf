"""The minion's schedule logic (issue 12), driven by a fake clock: no test sleeps."""

from __future__ import annotations

import logging

import pytest
import yaml

from briny.common.exceptions import ConfigError
from briny.common.schedentry import parse_entry
from briny.common.schedule import Schedule
from briny.common.schedfile import read_saved
from briny.minion.schedulectl import control


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def names(entries) -> list[str]:
    return [e.name for e in entries]


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_an_entry_runs_every_interval_and_not_before(clock):
    sched = Schedule(clock)
    assert sched.load({"hs": {"function": "state.apply", "seconds": 2}}) == {}
    assert sched.due() == [] and sched.seconds_to_next() == 2.0
    clock.now += 1.9
    assert sched.due() == []
    clock.now += 0.1
    due = sched.due()
    assert names(due) == ["hs"] and due[0].function == "state.apply" and due[0].return_job
    sched.finished("hs")
    assert sched.due() == [] and sched.seconds_to_next() == pytest.approx(2.0)
    clock.now += 2
    assert names(sched.due()) == ["hs"]


def test_units_are_summed_and_args_kwargs_kept(clock):
    entry = parse_entry("e", {"function": "cmd.run", "minutes": 1, "seconds": 30, "args": ["date"], "kwargs": {"a": 1}})
    assert entry.interval == 90 and entry.args == ["date"] and entry.kwargs == {"a": 1}
    assert parse_entry("d", {"function": "test.ping", "hours": 1, "days": 1}).interval == 90000
    assert parse_entry("j", {"function": "test.arg", "seconds": 1, "job_args": "x", "job_kwargs": {"k": 2}}).args == [
        "x"
    ]


def test_missed_runs_make_one_run_and_the_next_one_interval_on(clock):
    sched = Schedule(clock)
    sched.load({"hs": {"function": "state.apply", "seconds": 2}})
    clock.now += 7
    assert names(sched.due()) == ["hs"]
    sched.finished("hs")
    assert sched.due() == [] and sched.seconds_to_next() == 2.0


def test_run_on_start_runs_at_once(clock):
    sched = Schedule(clock)
    sched.load({"now": {"function": "test.ping", "minutes": 5, "run_on_start": True}})
    assert names(sched.due()) == ["now"]
    sched.finished("now")
    clock.now += 299
    assert sched.due() == []
    clock.now += 1
    assert names(sched.due()) == ["now"]


def test_splay_adds_a_random_delay_to_each_run(clock):
    draws: list[tuple[float, float]] = []

    def uniform(a: float, b: float) -> float:
        draws.append((a, b))
        return b

    sched = Schedule(clock, uniform)
    sched.load(
        {
            "s": {"function": "test.ping", "seconds": 10, "splay": 5},
            "r": {"function": "test.ping", "seconds": 10, "splay": {"start": 2, "end": 3}},
        }
    )
    assert draws == [(0.0, 5.0), (2.0, 3.0)]
    clock.now += 13
    assert names(sched.due()) == ["r"]
    clock.now += 2
    assert names(sched.due()) == ["s"]


def test_maxrunning_skips_a_run_while_one_is_going(clock, caplog):
    sched = Schedule(clock)
    sched.load(
        {
            "slow": {"function": "test.sleep", "seconds": 1},
            "two": {"function": "test.sleep", "seconds": 1, "maxrunning": 2},
        }
    )
    clock.now += 1
    assert names(sched.due()) == ["slow", "two"]
    clock.now += 1
    with caplog.at_level(logging.WARNING):
        assert names(sched.due()) == ["two"]
    assert "'slow': maxrunning (1) reached" in caplog.text
    clock.now += 1
    assert sched.due() == []  # two of "two" are going
    sched.finished("slow")
    clock.now += 1
    assert names(sched.due()) == ["slow"]


def test_disabled_entries_and_schedule_do_not_run(clock):
    sched = Schedule(clock)
    sched.load(
        {
            "off": {"function": "test.ping", "seconds": 1, "enabled": False},
            "on": {"function": "test.ping", "seconds": 1},
        }
    )
    clock.now += 1
    assert names(sched.due()) == ["on"]
    sched.finished("on")
    sched.enabled = False
    clock.now += 1
    assert sched.due() == []
    sched.load({"enabled": False, "x": {"function": "test.ping", "seconds": 1}}, "pillar")
    assert not sched.enabled and "x" in sched.entries


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"function": "test.ping", "seconds": "abc"}, "'bad': 'seconds' must be a number, not 'abc'"),
        ({"function": "test.ping", "minutes": -1}, "'bad': 'minutes' must be 0 or more"),
        ({"function": "test.ping"}, "'bad' has no timing: give seconds"),
        ({"function": "test.ping", "seconds": 0}, "'bad': its interval must be more than 0"),
        ({"seconds": 5}, "'bad' names no 'function'"),
        ({"function": "test.ping", "seconds": 5, "maxrunning": 0}, "'bad': 'maxrunning' must be"),
        ({"function": "test.ping", "cron": "*/5 * * *"}, "'bad': cron '*/5 * * *' has 4 fields"),
        ({"function": "test.ping", "cron": "0 0 L * *"}, "extension 'L' is not supported"),
        ({"function": "test.ping", "when": "tomorrow"}, "'bad': 'when': 'tomorrow' is not a date string"),
        ({"function": "test.ping", "when": "5pm", "seconds": 5}, 'unable to use "seconds"'),
        ({"function": "test.ping", "when": "5pm", "cron": "* * * * *"}, 'unable to use "when", "cron" and "once"'),
        ({"function": "test.ping", "once": "5pm"}, "date string could not be parsed: '5pm'"),
        ({"function": "test.ping", "seconds": 5, "range": {"start": "5pm"}}, "'range' must be a mapping with"),
        ({"function": "test.ping", "seconds": 5, "range": {"start": "5pm", "end": "3pm"}}, "end must be later"),
        ({"function": "test.ping", "seconds": 5, "after": "soon"}, "'after': 'soon' is not"),
        ("test.ping", "'bad' must be a mapping"),
    ],
)
def test_a_bad_entry_is_refused_by_name_and_the_others_run(clock, caplog, raw, message):
    sched = Schedule(clock)
    with caplog.at_level(logging.ERROR):
        refused = sched.load({"bad": raw, "good": {"function": "test.ping", "seconds": 1}})
    assert list(refused) == ["bad"] and message in refused["bad"]
    assert message in caplog.text and "not scheduled" in caplog.text
    with pytest.raises(ConfigError, match="bad"):
        parse_entry("bad", raw)
    clock.now += 1
    assert names(sched.due()) == ["good"]


def test_unsupported_options_are_named_in_a_warning(clock, caplog):
    with caplog.at_level(logging.WARNING):
        parse_entry("w", {"function": "test.ping", "seconds": 5, "returner": "redis", "metadata": {}, "bogus": 1})
    assert "'w': briny does not support metadata, returner; ignored" in caplog.text
    assert "unknown option(s) bogus" in caplog.text


def test_pillar_entries_replace_only_pillar_entries(clock):
    sched = Schedule(clock)
    sched.load({"c": {"function": "test.ping", "seconds": 5}})
    sched.load({"p": {"function": "test.ping", "seconds": 5}}, "pillar")
    sched.load({"q": {"function": "test.ping", "seconds": 5}}, "pillar")
    assert sorted(sched.entries) == ["c", "q"]


def test_control_add_modify_delete_and_jobs(clock, tmp_path):
    sched = Schedule(clock)
    path = tmp_path / "minion.d" / "_schedule.conf"
    ok = control(sched, "add", {"name": "j", "function": "test.ping", "seconds": 60}, path)
    assert ok == {"result": True, "comment": "Added job: j to schedule.", "changes": {"j": "added"}}
    assert control(sched, "add", {"name": "j", "function": "test.ping", "seconds": 60}, path)["comment"] == (
        "Job j already exists in schedule."
    )
    bad = control(sched, "add", {"name": "b", "function": "test.ping", "seconds": "soon"}, path)
    assert bad["result"] is False and "'b': 'seconds' must be a number" in bad["comment"] and "b" not in sched.entries
    assert control(sched, "add", {"function": "test.ping"}, path)["comment"] == "Job name is required."
    assert control(sched, "list", {}, path) == {
        "j": {
            "function": "test.ping",
            "seconds": 60,
            "enabled": True,
            "jid_include": True,
            "maxrunning": 1,
            "name": "j",
        }
    }
    mod = control(sched, "modify", {"name": "j", "function": "test.ping", "seconds": 30}, path)
    assert mod["comment"] == "Modified job: j in schedule." and sched.entries["j"].interval == 30
    assert mod["changes"]["j"]["old"]["seconds"] == 60 and mod["changes"]["j"]["new"]["seconds"] == 30
    assert control(sched, "disable_job", {"name": "j"}, path)["comment"] == "Disabled Job j in schedule."
    assert control(sched, "run_job", {"name": "j"}, path)["comment"] == "Job j is disabled."
    assert sched.seconds_to_next() != 0  # nothing queued
    forced = control(sched, "run_job", {"name": "j", "force": True}, path)  # Salt's force=True runs it anyway
    assert forced["comment"] == "Scheduling Job j on minion." and sched.seconds_to_next() == 0
    assert names(sched.due()) == ["j"]
    sched.finished("j")
    assert control(sched, "enable_job", {"name": "j"}, path)["comment"] == "Enabled Job j in schedule."
    assert control(sched, "run_job", {"name": "j"}, path)["comment"] == "Scheduling Job j on minion."
    assert sched.seconds_to_next() == 0 and names(sched.due()) == ["j"]  # now, not in 30 s
    assert control(sched, "disable", {}, path)["comment"] == "Disabled schedule on minion."
    assert control(sched, "list", {}, path)["enabled"] is False
    assert control(sched, "enable", {}, path)["comment"] == "Enabled schedule on minion."
    assert control(sched, "delete", {"name": "j"}, path)["changes"] == {"j": "removed"}
    assert control(sched, "delete", {"name": "j"}, path)["comment"] == "Job j does not exist."
    assert control(sched, "list", {}, path) == {}


def test_save_writes_non_pillar_entries_and_reload_reads_them(clock, tmp_path):
    sched = Schedule(clock)
    path = tmp_path / "minion.d" / "_schedule.conf"
    sched.load({"p": {"function": "test.ping", "seconds": 5}}, "pillar")
    control(sched, "add", {"name": "a", "function": "cmd.run", "job_args": ["date"], "minutes": 2}, path)
    assert control(sched, "save", {}, path)["comment"] == "Schedule (non-pillar items) saved."
    assert yaml.safe_load(path.read_text()) == {
        "schedule": {"a": {"function": "cmd.run", "job_args": ["date"], "minutes": 2, "name": "a"}}
    }
    control(sched, "delete", {"name": "a"}, path)
    again = control(sched, "reload", {}, path)
    assert again["result"] is True and sched.entries["a"].interval == 120 and "p" in sched.entries
    path.write_text("schedule: [")
    with pytest.raises(ConfigError, match="not valid YAML"):
        read_saved(path)
    assert control(sched, "reload", {}, path)["result"] is False
    path.unlink()
    assert "empty or invalid" in control(sched, "reload", {}, path)["comment"][0]


def test_control_postpone_skip_next_fire_time_and_list_where(tmp_path):
    import datetime as dt

    start = dt.datetime(2026, 11, 24, 6, 0)

    class Wall:
        now = start.timestamp()

        def __call__(self) -> float:
            return self.now

    wall = Wall()
    sched = Schedule(wall, wall=wall)
    path = tmp_path / "minion.d" / "_schedule.conf"
    sched.load({"c": {"function": "test.ping", "minutes": 10}})
    sched.load({"p": {"function": "test.ping", "cron": "30 6 * * *"}}, "pillar")
    assert list(control(sched, "list", {"where": "pillar"}, path)) == ["p"]
    assert list(control(sched, "list", {"where": "opts"}, path)) == ["c"]
    assert sorted(control(sched, "list", {"where": "elsewhere"}, path)) == ["c", "p"]
    assert control(sched, "next_fire_time", {"name": "c"}, path) == {
        "result": True,
        "next_fire_time": "2026-11-24T06:10:00",
    }
    assert control(sched, "next_fire_time", {"name": "p"}, path)["next_fire_time"] == "2026-11-24T06:30:00"
    assert control(sched, "next_fire_time", {"name": "nope"}, path) == {"result": True, "next_fire_time": None}
    moved = control(
        sched, "postpone_job", {"name": "c", "time": "2026-11-24T06:10:00", "new_time": "2026-11-24T06:12:00"}, path
    )
    assert moved == {"result": True, "comment": "Postponed Job c in schedule."}
    assert control(sched, "next_fire_time", {"name": "c"}, path)["next_fire_time"] == "2026-11-24T06:12:00"
    wall.now = dt.datetime(2026, 11, 24, 6, 10).timestamp()
    assert names(sched.due()) == []  # the 06:10 run is postponed ...
    wall.now = dt.datetime(2026, 11, 24, 6, 12).timestamp()
    assert names(sched.due()) == ["c"]  # ... to 06:12
    sched.finished("c")
    skipped = control(sched, "skip_job", {"name": "p", "time": "26/11/24 06:30", "time_fmt": "%y/%m/%d %H:%M"}, path)
    assert skipped == {"result": True, "comment": "Added Skip Job p in schedule."}
    wall.now = dt.datetime(2026, 11, 24, 6, 30).timestamp()
    assert names(sched.due()) == ["c"]  # p's 06:30 run is skipped
    bad = control(sched, "skip_job", {"name": "p", "time": "half past six"}, path)
    assert bad == {"result": False, "comment": "Date string could not be parsed."}
    control(sched, "disable_job", {"name": "p"}, path)
    refused = control(sched, "skip_job", {"name": "p", "time": "2026-11-25T06:30:00"}, path)
    assert refused == {"result": False, "comment": "Failed to skip job p in schedule."}
    assert control(sched, "postpone_job", {"name": "x", "time": "t"}, path)["comment"] == "Job x does not exist."
