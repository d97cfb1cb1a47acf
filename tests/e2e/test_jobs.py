"""A process per job (issue 11, ``multiprocessing: True``): ``saltutil.kill_job`` through the master
kills the job and what it started, the job is reported killed, and a module that crashes its
process does not take the minion down."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.minion.host.procs import descendants

from .support import Fleet, jid_from


def gone(pid: int) -> bool:
    """``pid`` has exited (a zombie nobody reaped yet counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(b")") + 2 :].split()[0] == b"Z"


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


@pytest.mark.slow
def test_kill_job_through_the_master_kills_the_job_and_its_command(one: Fleet) -> None:
    fleet = one
    daemon_pid = fleet.minions["k1"].pid
    started = fleet.briny("--async", "k1", "cmd.run", "sleep 60")
    assert started.returncode == 0, started.stderr
    jid = jid_from(started.stdout)
    record = fleet.wait(lambda: proc_record(fleet, "k1", jid), 20, f"the proc file of job {jid}")
    pid = int(record["pid"])
    assert pid != daemon_pid, "the job must run in a process of its own"
    sleep_pid = fleet.wait(
        lambda: next((p for p in descendants(pid) if _cmd(p).startswith("sleep")), None), 20, "the job's sleep command"
    )
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
        "k1": f"Signal 0 sent to job {jid} at pid {pid}"
    }
    assert not gone(pid)
    assert fleet.briny("--out", "json", "k1", "saltutil.term_job", jid).json() == {
        "k1": f"Signal 15 sent to job {jid} at pid {pid}"
    }
    fleet.wait(lambda: gone(pid), 10, "the job process to end")
    ret = fleet.wait_returns(jid, ["k1"])["k1"]
    assert "killed by signal 15 (SIGTERM)" in json.dumps(ret), ret
    # kill_all_jobs: every job but the one asking, each with Salt's answer
    jids = [jid_from(fleet.briny("--async", "k1", "cmd.run", "sleep 60").stdout) for _ in range(2)]
    pids = {j: int(fleet.wait(lambda j=j: proc_record(fleet, "k1", j), 20, "the proc files")["pid"]) for j in jids}
    answers = fleet.briny("--out", "json", "k1", "saltutil.kill_all_jobs").json()["k1"]
    assert sorted(answers) == sorted(f"Signal 9 sent to job {j} at pid {p}" for j, p in pids.items())
    fleet.wait(lambda: all(gone(p) for p in pids.values()), 10, "both jobs to end")


@pytest.mark.slow
def test_a_module_crashing_its_process_does_not_take_the_minion_down(make_fleet: Any) -> None:
    fleet = make_fleet(["k1"], auto_accept=True)
    roots = Path(fleet.master_opts["file_roots"]["base"][0])
    (roots / "_modules").mkdir()
    (roots / "_modules" / "crash.py").write_text(
        textwrap.dedent("""
        import ctypes
        import os

        def exit_now():
            os._exit(3)

        def segfault():
            ctypes.string_at(0)

        def memory():
            raise MemoryError()
        """)
    )
    fleet.start()
    daemon_pid = fleet.minions["k1"].pid
    synced = fleet.briny("--out", "json", "k1", "saltutil.sync_modules")
    assert synced.json() == {"k1": ["modules.crash"]}, synced.stdout + synced.stderr
    for fun, words in (
        ("crash.exit_now", "ended without a return (exit status 3)"),
        ("crash.segfault", "killed by signal 11 (SIGSEGV)"),
        ("crash.memory", "The minion function caused an exception"),
    ):
        res = fleet.briny("--out", "json", "k1", fun, "-t", "20")
        assert words in res.stdout, (fun, res.stdout, res.stderr)
        assert res.returncode != 0
        assert fleet.briny("--out", "json", "k1", "test.ping").json() == {"k1": True}, fun
    assert fleet.minions["k1"].pid == daemon_pid and fleet.minions["k1"].running


@pytest.mark.slow
def test_sigterm_of_the_minion_terminates_running_jobs_and_sends_their_returns(make_fleet: Any) -> None:
    fleet = make_fleet(["k1"], auto_accept=True, minion_opts={"shutdown_grace": 1}).start()
    jid = jid_from(fleet.briny("--async", "k1", "cmd.run", "sleep 60").stdout)
    pid = int(fleet.wait(lambda: proc_record(fleet, "k1", jid), 20, "the proc file")["pid"])
    sleep_pid = fleet.wait(lambda: next(iter(descendants(pid)), None), 20, "the job's sleep command")
    code = fleet.stop(fleet.minions["k1"])  # SIGTERM: the job gets shutdown_grace (1 s), then SIGTERM
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


@pytest.mark.slow
def test_a_queued_highstate_waits_for_the_running_one_then_runs(make_fleet: Any, tmp_path: Path) -> None:
    fleet = make_fleet(["q1"], auto_accept=True)
    roots = Path(fleet.master_opts["file_roots"]["base"][0])
    stop, started, out = tmp_path / "stop", tmp_path / "started", tmp_path / "out"
    (roots / "top.sls").write_text("base:\n  '*':\n    - after\n")
    (roots / "slow.sls").write_text(
        f"hold:\n  cmd.run:\n    - name: touch {started}; while [ ! -e {stop} ]; do sleep 0.02; done; "
        f"echo first > {out}\n    - timeout: 60\n"
    )
    (roots / "after.sls").write_text(f"read:\n  cmd.run:\n    - name: cat {out}\n")
    fleet.start()
    queue_dir = fleet.minions["q1"].root / "cache" / "state_queue"
    try:
        first = jid_from(fleet.briny("--async", "q1", "state.sls", "slow").stdout)
        fleet.wait(lambda: started.exists(), 20, "the first state run to start")
        first_pid = int(fleet.wait(lambda: proc_record(fleet, "q1", first), 20, "its proc file")["pid"])
        # without queue: Salt's refusal
        refused = fleet.briny("--out", "json", "q1", "state.apply")
        assert refused.json()["q1"] == [
            f'The function "state.sls" is running as PID {first_pid} and was started at '
            f"{_jid_time(first)} with jid {first}"
        ], refused.stdout
        queued = jid_from(fleet.briny("--async", "q1", "state.apply", "queue=True").stdout)
        fleet.wait(lambda: (queue_dir / queued).exists(), 20, "the second highstate to queue")
        assert (
            fleet.briny("--out", "json", "q1", "state.apply", "queue=1")
            .json()["q1"][0]
            .startswith('The function "state.sls" is running')
        )  # a run is ahead: queue=1 refuses
    finally:
        stop.touch()
    ret = fleet.wait_returns(first, ["q1"])["q1"]
    assert all(r["result"] is True for r in ret.get("return", ret).values()), ret
    after = fleet.wait_returns(queued, ["q1"], timeout=30)["q1"]
    states = after.get("return", after)
    (read,) = states.values()
    assert read["result"] is True and read["changes"]["stdout"] == "first", states
    fleet.wait(lambda: not [p for p in queue_dir.iterdir() if p.name != ".lock"], 10, "no queue marker")


def test_state_sls_without_an_sls_is_refused(one: Fleet) -> None:
    res = one.briny("--out", "json", "k1", "state.sls")
    assert res.json()["k1"].startswith(
        "Passed invalid arguments to state.sls: sls() missing 1 required positional argument: 'mods'"
    )
    assert res.returncode != 0
    empty = one.briny("--out", "json", "k1", "state.sls", "")
    assert empty.json() == {"k1": ["No matching sls found for '' in env 'base'"]} and empty.returncode != 0
    assert one.briny("--out", "json", "k1", "test.ping").json() == {"k1": True}


def _jid_time(jid: str) -> str:
    import calendar

    month = calendar.month_abbr[int(jid[4:6])]
    return f"{jid[:4]}, {month} {jid[6:8]} {jid[8:10]}:{jid[10:12]}:{jid[12:14]}.{jid[14:20]}"
