"""A process per job (issue 11, ``multiprocessing: True``): ``saltutil.kill_job`` through the master
kills the job and what it started, the job is reported killed, and a module that crashes its
process does not take the minion down."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.minion.procs import descendants

from .support import Fleet, jid_from


def gone(pid: int) -> bool:
    """``pid`` has exited (a zombie nobody reaped yet counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(b")") + 2:].split()[0] == b"Z"


def proc_record(fleet: Fleet, minion: str, jid: str) -> dict[str, Any] | None:
    path = fleet.minions[minion].root / "cache" / "proc" / jid
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def only_return(fleet: Fleet, jid: str, minion: str) -> Any:
    ret = fleet.wait_returns(jid, [minion])[minion]
    return ret.get("return", ret) if isinstance(ret, dict) else ret


@pytest.fixture
def one(make_fleet: Any) -> Fleet:
    return make_fleet(["k1"], auto_accept=True).start()


def test_kill_job_through_the_master_kills_the_job_and_its_command(one: Fleet) -> None:
    fleet = one
    daemon_pid = fleet.minions["k1"].pid
    started = fleet.briny("--async", "k1", "cmd.run", "sleep 60")
    assert started.returncode == 0, started.stderr
    jid = jid_from(started.stdout)
    record = fleet.wait(lambda: proc_record(fleet, "k1", jid), 20, f"the proc file of job {jid}")
    pid = int(record["pid"])
    assert pid != daemon_pid, "the job must run in a process of its own"
    sleep_pid = fleet.wait(lambda: next((p for p in descendants(pid) if _cmd(p).startswith("sleep")), None),
                           20, "the job's sleep command")
    # what saltutil reports as running shows the job's own pid
    running = fleet.briny("--out", "json", "k1", "saltutil.running").json()["k1"]
    assert [(r["jid"], r["pid"]) for r in running] == [(jid, pid)]

    res = fleet.briny("--out", "json", "k1", "saltutil.kill_job", jid)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.json() == {"k1": f"Signal 9 sent to job {jid} at pid {pid}"}
    fleet.wait(lambda: gone(pid) and gone(sleep_pid), 10, "the job process and its sleep to end")

    ret = fleet.wait_returns(jid, ["k1"])["k1"]
    assert "killed by signal 9 (SIGKILL)" in json.dumps(ret), ret
    fleet.wait(lambda: proc_record(fleet, "k1", jid) is None, 10, "the proc file to be removed")
    assert fleet.briny("--out", "json", "k1", "saltutil.running").json() == {"k1": []}
    assert fleet.briny("--out", "json", "k1", "saltutil.kill_job", jid).json() == {"k1": ""}
    ping = fleet.briny("--out", "json", "k1", "test.ping")
    assert ping.json() == {"k1": True}
    assert fleet.minions["k1"].pid == daemon_pid and fleet.minions["k1"].running


def test_term_job_and_signal_job_as_salt(one: Fleet) -> None:
    fleet = one
    jid = jid_from(fleet.briny("--async", "k1", "cmd.run", "sleep 60").stdout)
    pid = int(fleet.wait(lambda: proc_record(fleet, "k1", jid), 20, "the proc file")["pid"])
    assert fleet.briny("--out", "json", "k1", "saltutil.signal_job", jid, "0").json() == {
        "k1": f"Signal 0 sent to job {jid} at pid {pid}"}
    assert not gone(pid)
    assert fleet.briny("--out", "json", "k1", "saltutil.term_job", jid).json() == {
        "k1": f"Signal 15 sent to job {jid} at pid {pid}"}
    fleet.wait(lambda: gone(pid), 10, "the job process to end")
    ret = fleet.wait_returns(jid, ["k1"])["k1"]
    assert "killed by signal 15 (SIGTERM)" in json.dumps(ret), ret


def test_a_module_crashing_its_process_does_not_take_the_minion_down(make_fleet: Any) -> None:
    fleet = make_fleet(["k1"], auto_accept=True)
    roots = Path(fleet.master_opts["file_roots"]["base"][0])
    (roots / "_modules").mkdir()
    (roots / "_modules" / "crash.py").write_text(textwrap.dedent("""
        import ctypes
        import os

        def exit_now():
            os._exit(3)

        def segfault():
            ctypes.string_at(0)

        def memory():
            raise MemoryError()
        """))
    fleet.start()
    daemon_pid = fleet.minions["k1"].pid
    synced = fleet.briny("--out", "json", "k1", "saltutil.sync_modules")
    assert synced.json() == {"k1": ["modules.crash"]}, synced.stdout + synced.stderr
    for fun, words in (("crash.exit_now", "ended without a return (exit status 3)"),
                       ("crash.segfault", "killed by signal 11 (SIGSEGV)"),
                       ("crash.memory", "The minion function caused an exception")):
        res = fleet.briny("--out", "json", "k1", fun, "-t", "20")
        assert words in res.stdout, (fun, res.stdout, res.stderr)
        assert res.returncode != 0
        assert fleet.briny("--out", "json", "k1", "test.ping").json() == {"k1": True}, fun
    assert fleet.minions["k1"].pid == daemon_pid and fleet.minions["k1"].running


def test_sigterm_of_the_minion_terminates_running_jobs_and_sends_their_returns(one: Fleet) -> None:
    fleet = one
    jid = jid_from(fleet.briny("--async", "k1", "cmd.run", "sleep 60").stdout)
    pid = int(fleet.wait(lambda: proc_record(fleet, "k1", jid), 20, "the proc file")["pid"])
    sleep_pid = fleet.wait(lambda: next(iter(descendants(pid)), None), 20, "the job's sleep command")
    code = fleet.stop(fleet.minions["k1"])       # SIGTERM; shutdown_grace is 5 s in the fleet
    assert code == 0
    assert gone(pid) and gone(sleep_pid)
    ret = fleet.wait_returns(jid, ["k1"])["k1"]
    assert "killed by signal 15 (SIGTERM)" in json.dumps(ret), ret


def _cmd(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""
