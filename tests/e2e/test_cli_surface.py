"""Salt's command-line surface on real daemons (issue 11): pillar and range targets, ``--subset``,
``--failhard``, ``--out-file``, ``--summary``, ``--show-jid``, ``--hide-timeout``, ``jobs.print_job``
keyword arguments, ``jobs.active`` with the jobs' own pids, ``manage.versions`` / ``present``, and
``test.version``. Outputs were checked against Salt 3007.17 on a Salt master and minions on loopback."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import briny

from .support import Fleet, jid_from

pytestmark = pytest.mark.slow

VERSION = f"briny {briny.__version__} (Salt {briny.SALT_COMPAT_VERSION})"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    shared = Fleet(tmp_path_factory.mktemp("cli"), ["w1", "d1"], auto_accept=True)
    pillar = shared.root / "srv" / "pillar"
    (pillar / "top.sls").write_text("base:\n  'w1':\n    - web\n  'd1':\n    - db\n")
    (pillar / "web.sls").write_text("role: web\nnested: {deep: {k: v1}}\n")
    (pillar / "db.sls").write_text("role: db\n")
    try:
        shared.start()
        yield shared
    finally:
        shared.close()


@pytest.fixture
def ghost(fleet: Fleet) -> Iterator[str]:
    """An accepted key with no minion behind it (a host that is down)."""
    folder = fleet.master_dir / "pki" / "minions"
    path = folder / "ghost"
    shutil.copy(folder / "w1", path)
    try:
        yield "ghost"
    finally:
        path.unlink()


def _json(res: Any) -> Any:
    assert res.returncode == 0, res.stdout + res.stderr
    return res.json()


def test_pillar_targets_match_the_pillar_the_master_compiled(fleet: Fleet) -> None:
    assert _json(fleet.briny("--out", "json", "--static", "-I", "role:web", "test.ping")) == {"w1": True}
    assert _json(fleet.briny("--out", "json", "--static", "-I", "nested:deep:k:v*", "test.ping")) == {"w1": True}
    assert _json(fleet.briny("--out", "json", "--static", "-J", "role:d.$", "test.ping")) == {"d1": True}
    got = fleet.briny("--out", "json", "--static", "-C", "I@role:db or G@nothing:here", "test.ping")
    assert _json(got) == {"d1": True}
    got = fleet.briny("--out", "json", "--static", "-C", "not I@role:db", "test.ping")
    assert _json(got) == {"w1": True}
    none = fleet.briny("-I", "role:nobody", "test.ping")
    assert none.returncode == 2 and "No minions matched the target" in none.stdout


def test_range_targets_are_refused_as_salt_without_a_range_server(fleet: Fleet) -> None:
    for args in (("-R", "%cluster"), ("-C", "R@%cluster and w1")):
        res = fleet.briny(*args, "test.ping")
        assert res.returncode == 2, res.stdout + res.stderr
        assert "Range matcher unavailable" in res.stderr and res.stdout == ""
    assert _json(fleet.briny("--out", "json", "--static", "*", "test.ping")) == {"d1": True, "w1": True}


def test_subset_runs_on_that_many_minions_that_have_the_function(fleet: Fleet) -> None:
    got = _json(fleet.briny("--out", "json", "--static", "--subset", "1", "*", "test.echo", "hi"))
    assert len(got) == 1 and list(got.values()) == ["hi"] and set(got) <= {"w1", "d1"}
    assert _json(fleet.briny("--out", "json", "--static", "--subset", "5", "*", "test.ping")) == {
        "d1": True,
        "w1": True,
    }
    # nobody has the function: nothing is sent
    res = fleet.briny("--subset", "1", "*", "nosuch.function")
    assert res.returncode == 2 and "No minions matched" in res.stdout
    bad = fleet.briny("--subset", "0", "*", "test.ping")
    assert bad.returncode == 2 and "--subset must be at least 1" in bad.stderr


def test_out_file_show_jid_and_append(fleet: Fleet, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    res = fleet.briny("--out-file", str(out), "--show-jid", "w1", "test.ping")
    assert res.returncode == 0, res.stderr
    jid = res.stdout.removeprefix("jid: ").strip()
    assert res.stdout == f"jid: {jid}\n" and len(jid) == 20
    assert out.read_text() == "w1:\n    True\n"  # replaced, no colour codes
    res = fleet.briny("--out-file", str(out), "--out-file-append", "d1", "test.ping")
    assert res.returncode == 0 and res.stdout == ""
    assert out.read_text() == "w1:\n    True\nd1:\n    True\n"
    print_job = _json(fleet.run("--out", "json", "jobs.print_job", jid))
    assert print_job[jid]["Minions"] == ["w1"]
    unwritable = fleet.briny("--out-file", str(tmp_path / "no" / "such" / "dir"), "w1", "test.ping")
    assert unwritable.returncode == 2 and "cannot write --out-file" in unwritable.stderr


def test_summary_and_hide_timeout_with_a_minion_that_is_down(fleet: Fleet, ghost: str) -> None:
    res = fleet.briny("-t", "1", "--summary", "-v", "*", "test.ping")
    assert res.returncode == 1
    assert res.stdout.endswith(
        "\n\n-------------------------------------------\n"
        "Summary\n"
        "-------------------------------------------\n"
        "# of minions targeted: 3\n"
        "# of minions returned: 2\n"
        "# of minions that did not return: 1\n"
        "# of minions with errors: 0\n"
        "Minions not responding: ghost\n"
        "-------------------------------------------\n"
    ), res.stdout
    hidden = fleet.briny("-t", "1", "--hide-timeout", "--out", "json", "--static", "*", "test.ping")
    assert hidden.returncode == 0, hidden.stderr
    assert hidden.json() == {"d1": True, "w1": True}
    failing = fleet.briny("--summary", "w1", "test.retcode", "3")
    assert failing.returncode == 1
    assert "# of minions with errors: 1\n" in failing.stdout
    assert "Summary" not in fleet.briny("--summary", "--out", "json", "w1", "test.ping").stdout


def test_failhard_stops_a_batch_at_the_first_bad_return(fleet: Fleet) -> None:
    res = fleet.briny("-b", "1", "--failhard", "--out", "json", "-L", "d1,w1", "test.retcode", "4")
    assert res.returncode == 4  # a batch exits with the highest retcode, as Salt's
    ran = [line for line in res.stdout.splitlines() if line.startswith("Executing run on")]
    assert ran == ["Executing run on ['d1']"], res.stdout
    assert "Minion d1 returned with non-zero exit code. Batch run stopped due to failhard" in res.stderr
    # without --failhard the batch goes on; without -b, --failhard does nothing and says so
    res = fleet.briny("-b", "1", "--out", "json", "-L", "d1,w1", "test.retcode", "4")
    assert res.returncode == 4
    assert [line for line in res.stdout.splitlines() if line.startswith("Executing run on")] == [
        "Executing run on ['d1']",
        "Executing run on ['w1']",
    ]
    assert fleet.briny("-b", "1", "-L", "d1,w1", "test.ping").returncode == 0
    res = fleet.briny("--failhard", "--out", "json", "--static", "-L", "d1,w1", "test.ping")
    assert res.returncode == 0 and res.json() == {"d1": True, "w1": True}
    assert "--failhard stops a batch run" in res.stderr


def test_jobs_record_keyword_arguments_as_salt(fleet: Fleet) -> None:
    res = fleet.briny("--show-jid", "--out", "json", "w1", "test.arg", "a", "1", "test=True")
    jid = res.stdout.splitlines()[0].removeprefix("jid: ")
    job = _json(fleet.run("--out", "json", "jobs.print_job", jid))[jid]
    assert job["Arguments"] == ["a", 1, {"__kwarg__": True, "test": True}]
    assert job["Result"]["w1"]["return"]["args"] == ["a", 1]
    listed = _json(fleet.run("--out", "json", "jobs.list_jobs"))[jid]
    assert listed["Arguments"] == ["a", 1, {"__kwarg__": True, "test": True}]


def _proc(fleet: Fleet, minion: str, jid: str) -> dict[str, Any] | None:
    try:
        return json.loads((fleet.minions[minion].root / "cache" / "proc" / jid).read_text())
    except (FileNotFoundError, ValueError):
        return None


def test_jobs_active_shows_each_running_job_with_its_own_pid(fleet: Fleet) -> None:
    jid = jid_from(fleet.briny("--async", "w1", "cmd.run", "sleep 60").stdout)
    try:
        record = fleet.wait(lambda: _proc(fleet, "w1", jid), 20, "the job's proc file")
        active = _json(fleet.run("--out", "json", "jobs.active"))
        assert list(active) == [jid]
        assert active[jid]["Running"] == [{"w1": record["pid"]}]
        assert record["pid"] != fleet.minions["w1"].pid  # the job's own process
        assert active[jid]["Function"] == "cmd.run" and active[jid]["Arguments"] == ["sleep 60"]
        assert active[jid]["Returned"] == [] and active[jid]["Target"] == "w1"
    finally:
        fleet.briny("w1", "saltutil.kill_job", jid)
    fleet.wait_returns(jid, ["w1"])
    assert _json(fleet.run("--out", "json", "jobs.active")) == {}


def test_version_manage_versions_and_presence(fleet: Fleet, ghost: str) -> None:
    assert _json(fleet.briny("--out", "json", "--static", "-L", "w1,d1", "test.version")) == {
        "d1": VERSION,
        "w1": VERSION,
    }
    got = _json(fleet.run("--out", "json", "manage.versions", "timeout=2"))
    assert got == {"Up to date": {"d1": VERSION, "w1": VERSION}, "Minion offline": {"ghost": False}, "Master": VERSION}
    fleet.wait(lambda: "ghost" in fleet.minions_state()["accepted"], 10, "the master to see the ghost key")
    assert _json(fleet.run("--out", "json", "manage.present")) == ["d1", "w1"]
    assert _json(fleet.run("--out", "json", "manage.not_present")) == ["ghost"]
    assert _json(fleet.run("--out", "json", "manage.present", "subset=w1,ghost")) == ["w1"]
    warned = fleet.run("--out", "json", "manage.present", "show_ip=True")
    assert warned.json() == ["d1", "w1"] and "show_ip is not supported" in warned.stderr


def test_sys_doc_prints_the_docstrings_of_every_minion_merged(fleet: Fleet) -> None:
    import briny.minion.host.modules.test as test_module
    import briny.states.test as test_states

    res = fleet.briny("*", "sys.doc", "test.ping", "test.echo")
    assert res.returncode == 0, res.stderr
    assert res.stdout == f"test.echo:\n{test_module.echo.__doc__}\n\ntest.ping:\n{test_module.ping.__doc__}\n\n"
    got = _json(fleet.briny("--out", "json", "--static", "w1", "sys.state_doc", "test.nop"))
    assert got == {"w1": {"test": test_states.__doc__, "test.nop": test_states.nop.__doc__}}
    assert "test" in _json(fleet.briny("--out", "json", "--static", "w1", "sys.list_state_modules"))["w1"]


def test_cp_push_is_refused_by_default(fleet: Fleet, tmp_path: Path) -> None:
    src = tmp_path / "x.txt"
    src.write_text("x")
    assert _json(fleet.briny("--out", "json", "w1", "cp.push", str(src))) == {"w1": False}
    assert not (fleet.master_dir / "cache" / "minions").exists()
    log = (fleet.master_dir / "master.log").read_text()
    assert "refused a file pushed by w1" in log and "file_recv: False" in log
