"""The jobs runner and briny-run (master/runners/, master/runcli.py).

The expected shapes were observed with salt-run 3007.17 over Salt's own
local job cache holding the same two jobs.
"""

from __future__ import annotations

from typing import Any

import io
import json

import pytest

from briny.common.exceptions import FunctionNotFound, SaltInvocationError
from briny.master import runcli
from briny.master.jobcache import open_job_cache
from briny.master.runners import RunnerContext, get_runner, list_functions
from briny.master.runners import jobs

JID1 = "20240105123456123456"
JID2 = "20240106010203000001"
STATE_RET = {
    "file_|-x_|-/tmp/x_|-managed": {"result": True, "comment": "ok", "changes": {}, "name": "/tmp/x", "__run_num__": 0}
}


@pytest.fixture(params=["sqlite", "postgres"])
def master_dir(request, master_dir):
    """The master config dir, with the job cache of each backend: the runner reads both alike."""
    if request.param == "postgres":
        dsn = request.getfixturevalue("pg_dsn")
        with open(master_dir / "master", "a") as fh:
            fh.write(f"job_cache: postgres\npostgres.dsn: '{dsn}'\n")
    return master_dir


@pytest.fixture
def filled(master_opts):
    cache = open_job_cache(master_opts)
    cache.save_load(
        JID1,
        {"jid": JID1, "fun": "test.ping", "arg": [], "tgt": "*", "tgt_type": "glob", "user": "root"},
        minions=["m1", "m2"],
    )
    cache.save_return(
        JID1, "m1", {"jid": JID1, "id": "m1", "return": True, "retcode": 0, "success": True, "fun": "test.ping"}
    )
    cache.save_load(
        JID2,
        {
            "jid": JID2,
            "fun": "state.apply",
            "arg": ["web", {"__kwarg__": True, "test": True}],
            "tgt": ["m1", "m2"],
            "tgt_type": "list",
            "user": "sudo_alice",
        },
        minions=["m1"],
    )
    cache.save_return(
        JID2,
        "m1",
        {
            "jid": JID2,
            "id": "m1",
            "return": STATE_RET,
            "retcode": 0,
            "success": True,
            "out": "highstate",
            "fun": "state.apply",
        },
    )
    cache.close()
    return master_opts


@pytest.fixture
def ctx(filled):
    c = RunnerContext(filled)
    yield c
    c.close()


def test_start_time_format():
    assert jobs.jid_to_time(JID1) == "2024, Jan 05 12:34:56.123456"
    assert jobs.jid_to_time("123") == ""


def test_list_jobs_shape(ctx):
    assert jobs.list_jobs(ctx) == {
        JID1: {
            "Function": "test.ping",
            "Arguments": [],
            "Target": "*",
            "Target-type": "glob",
            "User": "root",
            "StartTime": "2024, Jan 05 12:34:56.123456",
        },
        JID2: {
            "Function": "state.apply",
            "Arguments": ["web", {"__kwarg__": True, "test": True}],
            "Target": ["m1", "m2"],
            "Target-type": "list",
            "User": "sudo_alice",
            "StartTime": "2024, Jan 06 01:02:03.000001",
        },
    }
    assert list(jobs.list_jobs(ctx)[JID1]) == ["Function", "Arguments", "Target", "Target-type", "User", "StartTime"]


def test_list_jobs_filters(ctx):
    assert list(jobs.list_jobs(ctx, search_function="state.*")) == [JID2]
    assert list(jobs.list_jobs(ctx, search_function="nope.*,test.*")) == [JID1]
    assert list(jobs.list_jobs(ctx, search_target="m2")) == [JID2]
    assert list(jobs.list_jobs(ctx, start_time="2024, Jan 06 00:00")) == [JID2]
    assert list(jobs.list_jobs(ctx, end_time="2024-01-05 23:00")) == [JID1]
    assert jobs.list_jobs(ctx, outputter="json")["outputter"] == "json"
    with pytest.raises(SaltInvocationError):
        jobs.list_jobs(ctx, start_time="yesterday-ish")


def test_metadata(master_opts):
    cache = open_job_cache(master_opts)
    cache.save_load(JID1, {"fun": "test.ping", "arg": [{"__kwarg__": True, "metadata": {"team": "a"}}]})
    cache.close()
    c = RunnerContext(master_opts)
    assert jobs.list_jobs(c)[JID1]["Metadata"] == {"team": "a"}
    assert list(jobs.list_jobs(c, search_metadata={"team": "a"})) == [JID1]
    assert jobs.list_jobs(c, search_metadata={"team": "b"}) == {}
    c.close()


def test_lookup_jid(ctx):
    assert jobs.lookup_jid(ctx, JID1) == {"m1": True}
    assert jobs.lookup_jid(ctx, JID1, missing=True) == {"m1": True, "m2": "Minion did not return"}
    assert jobs.lookup_jid(ctx, int(JID1)) == {"m1": True}  # a jid read as YAML is a number
    assert jobs.lookup_jid(ctx, JID2) == {"outputter": "highstate", "data": {"m1": STATE_RET}}
    assert jobs.lookup_jid(ctx, "20990101000000000000") == {}
    with pytest.raises(SaltInvocationError):
        jobs.lookup_jid(ctx, "../../x")


def test_print_job_matches_salt(ctx):
    # salt-run jobs.print_job 20240105123456123456 --out json, key order included
    salt = json.loads("""{"20240105123456123456": {"Function": "test.ping", "Arguments": [], "Target": "*",
        "Target-type": "glob", "User": "root", "Minions": ["m1", "m2"],
        "StartTime": "2024, Jan 05 12:34:56.123456",
        "Result": {"m1": {"return": true, "retcode": 0, "success": true}}}}""")
    got = jobs.print_job(ctx, JID1)
    assert got == salt
    assert list(got[JID1]) == list(salt[JID1])
    assert jobs.print_job(ctx, JID2)[JID2]["Result"]["m1"]["out"] == "highstate"


def test_print_unknown_job(ctx):
    assert jobs.print_job(ctx, "20990101000000000000") == {
        "20990101000000000000": {
            "Error": "Cannot contact returner or no job with this jid",
            "StartTime": "2099, Jan 01 00:00:00.000000",
            "Result": {},
        }
    }


def test_list_job_and_exit_success(ctx):
    one = jobs.list_job(ctx, JID1)
    assert one["jid"] == JID1 and one["Minions"] == ["m1", "m2"] and "m1" in one["Result"]
    assert jobs.exit_success(ctx, JID1) == {"m1": True, "m2": False}


def test_list_jobs_filter(ctx):
    got = jobs.list_jobs_filter(ctx, 1)
    assert [j["JID"] for j in got] == [JID2]
    assert [j["JID"] for j in jobs.list_jobs_filter(ctx, 5)] == [JID1, JID2]


def test_active_lists_each_minions_running_jobs_with_their_pids(master_opts, monkeypatch):
    """jobs.active asks every minion (saltutil.running) and shapes the answers as Salt's runner;
    Returned comes from the job cache. The wire part is tests/e2e/test_cli_surface.py."""
    import datetime

    jid = datetime.datetime.now().strftime("%Y%m%d%H%M%S%f")
    cache = open_job_cache(master_opts)
    cache.save_load(jid, {"fun": "test.sleep", "tgt": "*", "tgt_type": "glob"}, minions=["m1", "m2", "m3"])
    cache.save_return(jid, "m3", {"return": True})
    cache.close()
    running = {"jid": jid, "fun": "test.sleep", "arg": [20], "tgt": "*", "tgt_type": "glob", "user": "root"}
    answers = {
        "m2": {"return": [{**running, "pid": 222}]},
        "m1": {"return": [{**running, "pid": 111}, {"jid": "not-a-jid", "pid": 1}]},
        "m4": {"return": "ERROR: something"},
    }
    asked: list[tuple[Any, str]] = []

    def fake_cmd(self, tgt, fun, arg=None, tgt_type="glob", timeout=None):
        asked.append((tgt, fun))
        return sorted(answers), answers

    monkeypatch.setattr(RunnerContext, "cmd", fake_cmd)
    c = RunnerContext(master_opts)
    got = jobs.active(c)
    c.close()
    assert asked == [("*", "saltutil.running")]
    assert list(got) == [jid]
    assert got[jid]["Running"] == [{"m1": 111}, {"m2": 222}]
    assert got[jid]["Returned"] == ["m3"]
    assert got[jid]["Function"] == "test.sleep" and got[jid]["Arguments"] == [20]
    assert got[jid]["StartTime"] == jobs.jid_to_time(jid)


def test_keyword_arguments_are_shown_as_salt_records_them():
    load = {"fun": "test.arg", "arg": ["a", 1], "kwarg": {"test": True}, "tgt": "m1", "tgt_type": "glob"}
    assert jobs.format_job(load)["Arguments"] == ["a", 1, {"__kwarg__": True, "test": True}]
    # a load that already carries Salt's form keeps it once
    salt_form = {"fun": "test.arg", "arg": [{"__kwarg__": True, "test": True}], "kwarg": {"test": True}}
    assert jobs.format_job(salt_form)["Arguments"] == [{"__kwarg__": True, "test": True}]
    assert jobs.format_job({"fun": "test.ping", "arg": [], "kwarg": {}})["Arguments"] == []


def test_registry():
    assert get_runner("jobs.list_jobs") is jobs.list_jobs
    for bad in ("jobs.nope", "nope.x", "jobs._jid", "jobs", "../x.y", "jobs.RunnerContext", "jobs.log"):
        with pytest.raises(FunctionNotFound):
            get_runner(bad)
    assert "jobs.lookup_jid" in list_functions("jobs")


def run(master_dir, *args):
    out, err = io.StringIO(), io.StringIO()
    code = runcli.run(["-c", str(master_dir), *args], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_lookup_nested(master_dir, filled):
    assert run(master_dir, "jobs.lookup_jid", JID1) == (0, "m1:\n    True\n", "")


def test_cli_json_options_anywhere(master_dir, filled):
    code, out, _ = run(master_dir, "jobs.list_jobs", "--out", "json", "search_function=state.*")
    assert code == 0 and list(json.loads(out)) == [JID2]
    code, out, _ = run(master_dir, "--out=json", "jobs.lookup_jid", JID2)
    assert json.loads(out) == {"m1": STATE_RET}


def test_cli_runner_outputter_highstate(master_dir, filled):
    code, out, _ = run(master_dir, "jobs.lookup_jid", JID2)
    assert code == 0 and "Function: file.managed" in out and "Succeeded: 1" in out


def test_cli_errors(master_dir, filled):
    code, out, err = run(master_dir, "jobs.nope")
    assert (code, out) == (1, "'jobs.nope' is not available.\n")
    code, _, err = run(master_dir, "jobs.lookup_jid", "abc")
    assert code == 1 and "not a job id" in err
    code, _, err = run(master_dir, "jobs.lookup_jid", JID1, "bogus=1")
    assert code == 1 and "bogus" in err
    code, out, err = run(master_dir, "--eauth", "pam", "jobs.list_jobs")  # salt-run's external auth
    assert (code, out) == (2, "")
    assert err == (
        "briny-run: --auth pam (external auth) is a Salt option briny does not support yet; the runner did not "
        "run (docs/not-yet.md)\n"
    )


def test_ext_source_naming_another_returner_is_refused(master_dir, filled):
    """Salt's ``ext_source`` reads the jobs from another returner: briny has none, so it fails
    naming it rather than answering from its own cache as if it were that source."""
    code, out, err = run(master_dir, "jobs.lookup_jid", JID1, "ext_source=redis")
    assert (code, out) == (1, "")
    kind = "postgres" if "postgres" in (master_dir / "master").read_text() else "sqlite"
    assert err == (
        f"briny-run: jobs.lookup_jid: ext_source 'redis': briny reads only its own job cache ({kind}); returners "
        "are not supported (docs/not-yet.md)\n"
    )
    for fun in ("jobs.list_jobs", "jobs.list_job", "jobs.print_job", "jobs.exit_success", "jobs.list_jobs_filter"):
        first = [JID1] if fun in ("jobs.list_job", "jobs.print_job", "jobs.exit_success") else []
        if fun == "jobs.list_jobs_filter":
            first = ["1"]
        assert run(master_dir, fun, *first, "ext_source=redis")[0] == 1, fun
    # Salt's own default cache is this one
    assert run(master_dir, "jobs.lookup_jid", JID1, "ext_source=local_cache")[0] == 0


def test_cli_out_file_is_replaced_unless_appended_as_salt_run(master_dir, tmp_path):
    """salt-run's --out-file replaces the file; --out-file-append appends (checked with 3007.17)."""
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    assert run(master_dir, "test.arg", "1", "--out", "json", "--out-file", str(out))[0] == 0
    assert out.read_text() == '{\n    "args": [\n        1\n    ],\n    "kwargs": {}\n}\n'
    assert run(master_dir, "test.arg", "1", "--out", "json", "--out-file", str(out), "--out-file-append")[0] == 0
    assert out.read_text().count('"args"') == 2


def test_cli_manage_with_no_minions_needs_no_master(master_dir):
    assert run(master_dir, "manage.status", "--out", "json") == (0, '{\n    "up": [],\n    "down": []\n}\n', "")


def test_cli_state_event_without_a_master_fails_clearly(master_dir):
    code, out, err = run(master_dir, "state.event", "count=1")
    assert code == 1 and out == "" and "master" in err.lower()


def test_cli_empty_cache(master_dir):
    assert run(master_dir, "jobs.list_jobs", "--out", "json") == (0, "{}\n", "")


def test_main_run_entry_point(master_dir, filled, monkeypatch, capsys):
    from briny.master import cli

    monkeypatch.setattr("sys.argv", ["briny-run", "-c", str(master_dir), "jobs.lookup_jid", JID1, "--out", "json"])
    with pytest.raises(SystemExit) as exc:
        cli.main_run()
    assert exc.value.code == 0
    assert json.loads(capsys.readouterr().out) == {"m1": True}
