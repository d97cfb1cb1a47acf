"""saltutil.runner: a runner run on the master's host with the master's config, as Salt 3007 does
(observed with salt-call 3007.17: ``saltutil.runner test.arg arg=[1,2] kwarg={'x': 1}``,
``c=1`` joining kwarg, ``full_return=True``); never a request to the master."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from briny.common.config import load_minion_config
from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.common.loader import minion_mods
from briny.master import runcli
from briny.master.jobcache import open_job_cache
from briny.master.pillar import is_pure

JID = "20240105123456123456"


@pytest.fixture
def conf(tmp_path: Path) -> Path:
    """A config dir with a minion config and, beside it, the master's."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "minion").write_text(f"id: m1\nfile_client: local\nroot_dir: {tmp_path / 'mroot'}\n")
    (conf / "master").write_text(f"root_dir: {tmp_path / 'root'}\ncachedir: cache\npki_dir: pki\nsock_dir: sock\n")
    return conf


def runner(conf: Path) -> object:
    return minion_mods(load_minion_config(conf), {}, {})["saltutil.runner"]


def test_arguments_as_salt_passes_them(conf: Path) -> None:
    run = runner(conf)
    assert run("test.arg", arg=[1, "two"], kwarg={"x": {"y": 1}}) == {
        "args": [1, "two"],
        "kwargs": {"x": {"y": 1}},
    }
    # other keyword arguments join kwarg; the loader's dunders do not
    assert run("test.arg", c=1, d=[2], __pub_jid="1") == {"args": [], "kwargs": {"c": 1, "d": [2]}}
    # values that a command line would read back differently stay as they are
    assert run("test.arg", arg=["#x", "a=b", "yes", ""]) == {"args": ["#x", "a=b", "yes", ""], "kwargs": {}}
    assert run("test.sleep", kwarg={"s_time": 0}) is True


def test_full_return(conf: Path) -> None:
    got = runner(conf)("test.arg", arg=["x"], full_return=True)
    assert len(got.pop("jid")) == 20
    assert got == {
        "fun": "runner.test.arg",
        "user": "UNKNOWN",
        "fun_args": ["x", {"__pub_user": "UNKNOWN"}],
        "return": {"args": ["x"], "kwargs": {}},
        "success": True,
    }


def test_reads_the_masters_job_cache(conf: Path) -> None:
    cache = open_job_cache(load_minion_config(conf) | _master_opts(conf))
    cache.save_load(JID, {"jid": JID, "fun": "test.ping", "arg": [], "tgt": "*", "tgt_type": "glob", "user": "root"})
    cache.close()
    jobs = runner(conf)("jobs.list_jobs")
    assert list(jobs) == [JID] and jobs[JID]["Function"] == "test.ping"


def _master_opts(conf: Path) -> dict:
    from briny.common.config import load_master_config

    return load_master_config(conf)


def test_no_master_config_here(conf: Path) -> None:
    (conf / "master").unlink()
    with pytest.raises(CommandExecutionError, match=r"runs runners on the master's host.*none at .*/conf/master"):
        runner(conf)("test.arg")


def test_bad_input(conf: Path) -> None:
    run = runner(conf)
    with pytest.raises(CommandExecutionError, match=r"^'nope.nope' is not available\.$"):
        run("nope.nope")
    with pytest.raises(SaltInvocationError, match="arg must be a list"):
        run("test.arg", arg="x")
    with pytest.raises(SaltInvocationError, match="kwarg must be a dict"):
        run("test.arg", kwarg=[1])
    with pytest.raises(SaltInvocationError, match="name of a runner"):
        run("")
    with pytest.raises(CommandExecutionError, match="unexpected keyword argument 'bogus'|bogus"):
        run("test.sleep", kwarg={"bogus": 1})


def test_never_run_by_a_master_side_compile() -> None:
    """A template compiled on the master for a minion does not run runners there."""
    assert not is_pure("saltutil.runner")


def test_briny_run_arg_json(conf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = io.StringIO(), io.StringIO()
    request = '{"arg": ["#x"], "kwarg": {"k": "a=b"}, "saltenv": "dev"}'
    monkeypatch.setattr("sys.stdin", io.StringIO(request))
    rc = runcli.run(["-c", str(conf), "--out", "json", "--arg-json", "test.arg"], out=out, err=err)
    assert rc == 0 and '"#x"' in out.getvalue() and '"a=b"' in out.getvalue()
    assert "saltenv" not in out.getvalue()  # test.arg takes **kwargs, not a saltenv parameter
    for bad, says in (("[1]", "a JSON object"), ('{"arg": 1}', '"arg" must be a list'), ("{", "Expecting")):
        err = io.StringIO()
        monkeypatch.setattr("sys.stdin", io.StringIO(bad))
        rc = runcli.run(["-c", str(conf), "--arg-json", "test.arg"], out=io.StringIO(), err=err)
        assert rc == 2 and says in err.getvalue()
    err = io.StringIO()
    assert runcli.run(["-c", str(conf), "--arg-json", "test.arg", "x"], out=io.StringIO(), err=err) == 2
    assert "not on the command line" in err.getvalue()


def test_saltenv_only_to_a_runner_that_takes_it() -> None:
    def takes(saltenv: str = "base") -> str:
        return saltenv

    def not_it(**kwargs: object) -> None:
        return None

    assert runcli._json_arguments('{"saltenv": "dev"}', takes) == ([], {"saltenv": "dev"})
    assert runcli._json_arguments('{"saltenv": "dev"}', not_it) == ([], {})
