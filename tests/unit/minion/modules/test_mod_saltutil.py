"""saltutil: running jobs from the proc folder, signalling, masterless sync, refreshes."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
import time

import pytest

from briny.common.config import MINION_DEFAULTS, apply_config
from briny.common.loader import minion_mods
from briny.common.jobcontext import JobContext, RunningJob
from briny.minion.jobregistry import JobRegistry

JID_A, JID_B, JID_C = "20240101000000000001", "20240101000000000002", "20240101000000000003"
SALT_SYNC_KEYS = [
    "tops",
    "clouds",
    "beacons",
    "modules",
    "states",
    "sdb",
    "grains",
    "renderers",
    "returners",
    "output",
    "utils",
    "log_handlers",
    "executors",
    "proxymodules",
    "engines",
    "thorium",
    "serializers",
    "matchers",
    "pillar",
    "wrapper",
]


@pytest.fixture
def opts(tmp_path):
    (tmp_path / "srv").mkdir()
    return apply_config(
        {
            "id": "m1",
            "root_dir": str(tmp_path),
            "cachedir": "cache",
            "file_client": "local",
            "file_roots": {"base": [str(tmp_path / "srv")]},
        },
        MINION_DEFAULTS,
        "test",
    )


def salt(opts, **job):
    """A job's loader; ``job`` fills its context (``__job__``: jid, jobs, refresh hooks)."""
    return minion_mods(opts, {}, {}, job=JobContext(**job))


def write_proc(opts, jid, pid, fun="test.sleep", **extra):
    proc = os.path.join(opts["cachedir"], "proc")
    os.makedirs(proc, exist_ok=True)
    record = {
        "jid": jid,
        "fun": fun,
        "arg": [30],
        "pid": pid,
        "tid": 1,
        "started": "x",
        "tgt": "m1",
        "tgt_type": "glob",
        "user": "root",
        "ret": "",
        **extra,
    }
    with open(os.path.join(proc, jid), "w") as fh:
        json.dump(record, fh)
    return os.path.join(proc, jid)


@pytest.fixture
def sleeper():
    proc = subprocess.Popen(["sleep", "30"])
    yield proc
    proc.kill()
    proc.wait()


def test_running_find_job_and_is_running(opts, sleeper):
    write_proc(opts, JID_A, sleeper.pid)
    dead = write_proc(opts, JID_B, 2**22 + 12345, fun="state.apply")  # no such pid: cleaned up
    s = salt(opts)
    running = s["saltutil.running"]()
    assert [j["jid"] for j in running] == [JID_A]
    assert running[0] == {
        "jid": JID_A,
        "fun": "test.sleep",
        "arg": [30],
        "pid": sleeper.pid,
        "started": "x",
        "tgt": "m1",
        "tgt_type": "glob",
        "user": "root",
        "ret": "",
    }
    assert not os.path.exists(dead)
    assert s["saltutil.find_job"](JID_A)["fun"] == "test.sleep"
    assert s["saltutil.find_job"](JID_C) == {}
    assert [j["jid"] for j in s["saltutil.is_running"]("test.*")] == [JID_A]
    assert s["saltutil.is_running"]("state.*") == []


def test_running_skips_the_asking_job_and_stale_thread_jobs(opts):
    registry = JobRegistry()
    registry.add(RunningJob(JID_A, "test.sleep", time.time(), os.getpid(), threading.get_ident()))
    write_proc(opts, JID_A, os.getpid())
    stale = write_proc(opts, JID_B, os.getpid())  # our pid, but no such thread job
    write_proc(opts, JID_C, os.getpid(), fun="saltutil.running")
    s = salt(opts, jid=JID_C, jobs=registry)
    registry.add(RunningJob(JID_C, "saltutil.running", time.time(), os.getpid(), threading.get_ident()))
    assert [j["jid"] for j in s["saltutil.running"]()] == [JID_A]
    assert not os.path.exists(stale)


def test_kill_job_signals_another_process(opts, sleeper):
    write_proc(opts, JID_A, sleeper.pid)
    s = salt(opts)
    assert s["saltutil.kill_job"](JID_A) == f"Signal 9 sent to job {JID_A} at pid {sleeper.pid}"
    assert sleeper.wait(5) == -9
    assert s["saltutil.kill_job"](JID_B) == ""
    assert s["saltutil.signal_job"](JID_A, 15) == ""  # gone now: its proc file was cleaned up


def test_thread_jobs_are_stopped_through_the_registry_never_the_minion(opts):
    registry = JobRegistry()
    write_proc(opts, JID_A, os.getpid())
    stop = threading.Event()
    caught = []

    def body():
        try:
            while not stop.is_set():
                time.sleep(0.01)
        except BaseException as exc:  # noqa: BLE001 - JobKilled is what we look for
            caught.append(type(exc).__name__)

    worker = threading.Thread(target=body)
    worker.start()
    registry.add(RunningJob(JID_A, "test.sleep", time.time(), os.getpid(), worker.ident))
    try:
        assert "cannot be signalled" in salt(opts)["saltutil.term_job"](JID_A)  # no registry: refuse
        msg = salt(opts, jobs=registry)["saltutil.term_job"](JID_A)
        assert msg == f"Signal 15 sent to job {JID_A} at pid {os.getpid()}"
        worker.join(5)
        assert caught == ["JobKilled"]
    finally:
        stop.set()
        worker.join(5)


def test_sync_copies_custom_modules_reports_changes_and_cleans(opts, tmp_path):
    srv = tmp_path / "srv"
    (srv / "_modules").mkdir()
    (srv / "_states").mkdir()
    (srv / "_modules" / "mymod.py").write_text("def hi():\n    return 1\n")
    (srv / "_modules" / "other.py").write_text("def yo():\n    return 2\n")
    (srv / "_states" / "mystate.py").write_text("def x(name):\n    return {}\n")

    def s():  # a loader per call, as each job has (and so a fresh file listing)
        return salt(opts)

    assert s()["saltutil.sync_modules"]() == ["modules.mymod", "modules.other"]
    assert s()["saltutil.sync_modules"]() == []
    ext = os.path.join(opts["extension_modules"], "modules")
    assert sorted(os.listdir(ext)) == ["mymod.py", "other.py"]
    (srv / "_modules" / "other.py").unlink()
    (srv / "_modules" / "mymod.py").write_text("def hi():\n    return 3\n")
    assert s()["saltutil.sync_modules"]() == ["modules.mymod", "modules.other"]
    assert os.listdir(ext) == ["mymod.py"]
    everything = s()["saltutil.sync_all"]()
    assert list(everything) == SALT_SYNC_KEYS
    assert everything["states"] == ["states.mystate"] and everything["modules"] == []
    assert s()["saltutil.sync_states"]() == [] and s()["saltutil.sync_grains"]() == []
    (srv / "_modules" / "other.py").write_text("def yo():\n    return 2\n")
    assert s()["saltutil.sync_modules"](extmod_whitelist="other") == ["modules.other"]
    assert s()["saltutil.sync_modules"](extmod_blacklist={"modules": ["other"]}) == ["modules.other"]


def test_a_synced_kind_briny_does_not_load_is_named_in_a_warning(opts, tmp_path, caplog):
    (tmp_path / "srv" / "_returners").mkdir()
    (tmp_path / "srv" / "_returners" / "myret.py").write_text("def returner(ret):\n    pass\n")
    with caplog.at_level(logging.WARNING):
        assert salt(opts)["saltutil.sync_returners"]() == ["returners.myret"]
    assert [r.getMessage() for r in caplog.records if "saltutil" in r.getMessage()] == [
        "saltutil.sync_returners copied returners.myret, but briny does not load custom returners yet: they have "
        "no effect (docs/not-yet.md)"
    ]


def test_synced_modules_are_used_by_the_next_job(opts, tmp_path):
    from briny.minion.executor import Executor, Job

    (tmp_path / "srv" / "_modules").mkdir()
    (tmp_path / "srv" / "_modules" / "mymod.py").write_text("def hi(**kwargs):\n    return 'hello'\n")
    # with a master the roots' _modules are not read in place: only what was synced
    ex = Executor({**opts, "file_client": "remote"}, dict)
    assert ex.run(Job(JID_A, "mymod.hi")).error == "not_found"
    assert ex.run(Job(JID_A, "saltutil.sync_modules")).ret == ["modules.mymod"]
    assert ex.run(Job(JID_A, "mymod.hi")).ret == "hello"


def test_refreshes(opts):
    assert salt(opts)["saltutil.refresh_pillar"]() is False  # no daemon keeps pillar
    assert salt(opts)["saltutil.refresh_grains"]() is True
    calls = []
    s = salt(opts, refresh_pillar=lambda: calls.append("p") or True, refresh_grains=lambda: calls.append("g") or True)
    assert s["saltutil.refresh_pillar"]() is True and s["saltutil.refresh_grains"]() is True
    assert calls == ["p", "g"]
