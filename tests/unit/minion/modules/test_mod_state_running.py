"""One state run at a time: ``state.running`` sees the minion's own thread jobs, and a second
``state.apply``/``sls``/``highstate`` is refused with Salt's words (a list of strings, retcode 1)
while the first one goes on unaffected."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from briny.common.config import MINION_DEFAULTS, apply_config
from briny.common.loader import minion_mods
from briny.common.jobcontext import JobContext, RunningJob
from briny.minion.executor import Executor, Job
from briny.minion.jobregistry import JobRegistry

from tests.waiting import wait_until

JID_A, JID_B, JID_C = "20240101000000000001", "20240102030405000002", "20240101000000000003"


def salt_words(fun: str, pid: int, jid: str, when: str) -> str:
    return f'The function "{fun}" is running as PID {pid} and was started at {when} with jid {jid}'


@pytest.fixture
def opts(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "srv").mkdir()
    (tmp_path / "pillar").mkdir()
    return apply_config(
        {
            "id": "m1",
            "root_dir": str(tmp_path),
            "cachedir": "cache",
            "file_client": "local",
            "file_roots": {"base": [str(tmp_path / "srv")]},
            "pillar_roots": {"base": [str(tmp_path / "pillar")]},
        },
        MINION_DEFAULTS,
        "test",
    )


def write_proc(opts: dict[str, Any], jid: str, pid: int, fun: str) -> None:
    proc = os.path.join(opts["cachedir"], "proc")
    os.makedirs(proc, exist_ok=True)
    with open(os.path.join(proc, jid), "w") as fh:
        json.dump(
            {
                "jid": jid,
                "fun": fun,
                "arg": [],
                "pid": pid,
                "tid": 1,
                "started": "x",
                "tgt": "m1",
                "tgt_type": "glob",
                "user": "root",
                "ret": "",
            },
            fh,
        )


def test_running_sees_an_earlier_thread_job_of_this_minion(opts):
    registry = JobRegistry()
    registry.add(RunningJob(JID_A, "state.apply", 1000.0, os.getpid(), 1))
    write_proc(opts, JID_A, os.getpid(), "state.apply")
    registry.add(RunningJob(JID_B, "state.sls", 1001.0, os.getpid(), threading.get_ident()))
    salt = minion_mods(opts, {}, {}, job=JobContext(jid=JID_B, jobs=registry))
    assert salt["state.running"]() == [salt_words("state.apply", os.getpid(), JID_A, "2024, Jan 01 00:00:00.000001")]
    assert salt["state.running"](concurrent=True) == []
    # the earlier job does not defer to the later one: exactly one of two racing jobs runs
    salt = minion_mods(opts, {}, {}, job=JobContext(jid=JID_A, jobs=registry))
    assert salt["state.running"]() == []


def test_running_counts_registered_jobs_without_a_proc_file_and_ignores_others(opts):
    registry = JobRegistry()
    registry.add(RunningJob(JID_A, "state.highstate", 1000.0, os.getpid(), 1))  # no proc file yet
    registry.add(RunningJob(JID_C, "test.sleep", 1000.5, os.getpid(), 1))  # not a state function
    write_proc(opts, JID_C, os.getpid(), "test.sleep")
    registry.add(RunningJob(JID_B, "state.apply", 1001.0, os.getpid(), threading.get_ident()))
    salt = minion_mods(opts, {}, {}, job=JobContext(jid=JID_B, jobs=registry))
    assert salt["state.running"]() == [
        salt_words("state.highstate", os.getpid(), JID_A, "2024, Jan 01 00:00:00.000001")
    ]


def test_running_sees_a_state_run_in_another_process(opts):
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        write_proc(opts, JID_B, sleeper.pid, "state.sls")
        salt = minion_mods(opts, {}, {})
        assert salt["state.running"]() == [salt_words("state.sls", sleeper.pid, JID_B, "2024, Jan 02 03:04:05.000002")]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert minion_mods(opts, {}, {})["state.running"]() == []  # gone: its proc file is stale


def test_a_second_state_run_is_refused_and_the_first_goes_on(opts, tmp_path):
    stop = tmp_path / "stop"
    started = tmp_path / "started"
    out = tmp_path / "out"
    (tmp_path / "srv/top.sls").write_text("base:\n  '*':\n    - slow\n")
    (tmp_path / "srv/slow.sls").write_text(
        f"hold:\n  cmd.run:\n    - name: touch {started}; while [ ! -e {stop} ]; do sleep 0.02; done\n"
        f"    - timeout: 20\n"
        f"after:\n  file.managed:\n    - name: {out}\n    - contents: done\n"
    )
    registry = JobRegistry()
    ex = Executor(opts, dict, registry=registry)
    first: list[Any] = []
    worker = threading.Thread(target=lambda: first.append(ex.run(Job(JID_A, "state.apply"))))
    worker.start()
    try:
        wait_until(started.exists, 20, "the first state run to start")
        words = salt_words("state.apply", os.getpid(), JID_A, "2024, Jan 01 00:00:00.000001")
        for fun, arg in (
            ("state.apply", []),
            ("state.sls", ["slow"]),
            ("state.highstate", []),
            ("state.single", ["test.nop", "x"]),
        ):
            res = ex.run(Job(JID_B, fun, arg))
            assert res.ret == [words], fun
            assert res.retcode == 1 and res.success is False and res.out == "highstate"
        dry = ex.run(Job(JID_C, "state.apply", [], {"concurrent": True, "test": True}))
        assert isinstance(dry.ret, dict) and dry.retcode == 0, dry.ret  # concurrent=True: allowed
    finally:
        stop.touch()
        worker.join(30)
    (res,) = first
    assert res.retcode == 0 and res.success, res.ret
    assert all(r["result"] for r in res.ret.values())
    assert out.read_text() == "done\n"
    # nothing runs any more: the next one is not refused
    again = ex.run(Job("20240101000000000009", "state.sls", ["slow"], {"test": True}))
    assert isinstance(again.ret, dict) and again.retcode == 0, again.ret


def _slow_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    stop, started, out = tmp_path / "stop", tmp_path / "started", tmp_path / "out"
    (tmp_path / "srv/slow.sls").write_text(
        f"hold:\n  cmd.run:\n    - name: touch {started}; while [ ! -e {stop} ]; do sleep 0.02; done; "
        f"echo first > {out}\n    - timeout: 20\n"
    )
    (tmp_path / "srv/after.sls").write_text(f"read:\n  cmd.run:\n    - name: cat {out}\n")
    return stop, started, out


def _queued_behind_a_slow_run(
    opts: dict[str, Any], tmp_path: Path, queue: Any, meanwhile: Any = None
) -> tuple[Any, Any]:
    """Run ``state.sls slow`` (held until released), then ``state.sls after queue=<queue>``; once
    the second is queued (its marker is there) call ``meanwhile(executor)``, release the first.
    The two results."""
    stop, started, _ = _slow_tree(tmp_path)
    ex = Executor(opts, dict, registry=JobRegistry())
    results: dict[str, Any] = {}
    first = threading.Thread(target=lambda: results.setdefault("a", ex.run(Job(JID_A, "state.sls", ["slow"]))))
    queued = threading.Thread(
        target=lambda: results.setdefault("b", ex.run(Job(JID_B, "state.sls", ["after"], {"queue": queue})))
    )
    first.start()
    try:
        wait_until(started.exists, 20, "the first state run to start")
        queued.start()
        wait_until((tmp_path / "cache" / "state_queue" / JID_B).exists, 20, "the second run to queue")
        if meanwhile is not None:
            meanwhile(ex)
        assert "b" not in results
    finally:
        stop.touch()
        first.join(30)
        if queued.ident is not None:
            queued.join(30)
    return results["a"], results["b"]


def test_queue_true_waits_for_the_running_state_run_then_runs(opts, tmp_path):
    def meanwhile(ex: Executor) -> None:
        # while one runs and one waits: queue=1 is refused (a run is ahead), no queue too
        words = salt_words("state.sls", os.getpid(), JID_A, "2024, Jan 01 00:00:00.000001")
        refused = ex.run(Job(JID_C, "state.sls", ["after"], {"queue": 1}))
        assert words in refused.ret and refused.retcode == 1, refused.ret
        assert ex.run(Job(JID_C, "state.sls", ["after"])).retcode == 1

    first, after = _queued_behind_a_slow_run(opts, tmp_path, True, meanwhile)
    assert first.retcode == 0, first.ret
    assert after.retcode == 0, after.ret
    (read,) = after.ret.values()
    assert read["changes"]["stdout"] == "first"  # it ran once the first run had finished
    assert os.listdir(tmp_path / "cache" / "state_queue") == [".lock"]  # no marker left


def test_queue_with_a_number_waits_when_fewer_runs_are_ahead(opts, tmp_path):
    _, after = _queued_behind_a_slow_run(opts, tmp_path, 2)
    assert after.retcode == 0 and list(after.ret.values())[0]["changes"]["stdout"] == "first"


def test_state_sls_without_an_sls_is_refused_as_salt_does(opts, tmp_path):
    (tmp_path / "srv/a.sls").write_text("a:\n  test.nop\n")
    ex = Executor(opts, dict)
    res = ex.run(Job(JID_A, "state.sls"))
    assert res.error == "invocation" and res.retcode == 1
    assert res.ret.startswith(
        "Passed invalid arguments to state.sls: sls() missing 1 required positional argument: 'mods'"
    )
    for mods, errors in (
        ("", ["No matching sls found for '' in env 'base'"]),
        (",", ["No matching sls found for '' in env 'base'"] * 2),
        ("a,", ["No matching sls found for '' in env 'base'"]),
    ):
        res = ex.run(Job(JID_A, "state.sls", [mods]))
        assert res.ret == errors and res.retcode == 1, (mods, res.ret)
