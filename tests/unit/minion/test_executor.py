"""The executor: one job = fresh loader, Salt's args, __pub_*, retcode/success, proc files, stops."""

from __future__ import annotations

import json
import os
import signal
import textwrap
import threading
from pathlib import Path

import pytest

from briny.common.config import MINION_DEFAULTS, apply_config
from briny.common.exceptions import WireError
from briny.minion.executor import Executor, Job
from briny.minion.pillar import LocalPillar
from briny.minion.jobregistry import JobRegistry

from tests.waiting import wait_until


@pytest.fixture
def opts(tmp_path):
    for d in ("srv", "pillar", "extmods/modules"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "extmods/modules/probe.py").write_text(
        textwrap.dedent("""
        import os, time
        from briny.common.exceptions import CommandExecutionError
        COUNTER = []

        def proc(**kwargs):
            path = os.path.join(__opts__["cachedir"], "proc", kwargs["__pub_jid"])
            with open(path) as fh:
                return fh.read()

        def wait_proc(seconds=10, **kwargs):
            path = os.path.join(__opts__["cachedir"], "proc", kwargs["__pub_jid"])
            end = time.time() + seconds
            while time.time() < end:
                if os.path.exists(path):
                    with open(path) as fh:
                        return fh.read()
                time.sleep(0.01)
            return None

        def has_proc(**kwargs):
            return os.path.exists(os.path.join(__opts__["cachedir"], "proc", kwargs["__pub_jid"]))

        def find(jid, **kwargs):
            return __salt__["saltutil.find_job"](jid)

        def mutate_grains(**kwargs):
            __grains__["os"] = "changed"
            __grains__["ipv4"].append("10.9.9.9")
            return __grains__

        def bump(**kwargs):
            COUNTER.append(1)
            return len(COUNTER)

        def spin(seconds=10, **kwargs):
            end = time.time() + seconds
            while time.time() < end:
                time.sleep(0.01)
            return "finished"

        def fail(**kwargs):
            raise CommandExecutionError("the disk is full")

        def result_false(**kwargs):
            return {"result": False, "comment": "nope"}

        def context(code, **kwargs):
            __context__["retcode"] = code
            return "set"

        def who(**kwargs):
            import threading
            return threading.current_thread().name

        def pillar_x(**kwargs):
            return __pillar__.get("x")

        class Held:  # something the namespace holds, as it holds the job's grains and pillar
            pass

        HELD = Held()

        def hold(**kwargs):
            import weakref
            __opts__["held"].append(weakref.ref(HELD))
            __opts__["held"].append(weakref.ref(__job__))
            return "held"
    """)
    )
    (tmp_path / "pillar/top.sls").write_text("base:\n  '*':\n    - data\n")
    (tmp_path / "pillar/data.sls").write_text("x: {{ 40 + 2 }}\n")
    return apply_config(
        {
            "id": "m1",
            "root_dir": str(tmp_path),
            "cachedir": "cache",
            "file_client": "local",
            "extension_modules": str(tmp_path / "extmods"),
            "file_roots": {"base": [str(tmp_path / "srv")]},
            "pillar_roots": {"base": [str(tmp_path / "pillar")]},
        },
        MINION_DEFAULTS,
        "test",
    )


def job(fun, arg=None, kwarg=None, jid="20240101000000000001"):
    return Job(jid=jid, fun=fun, arg=arg or [], kwarg=kwarg or {}, tgt="m1", user="root")


def test_publish_loads_are_validated():
    good = Job.from_publish({"jid": "20240101000000000001", "fun": "test.ping"})
    assert good.arg == [] and good.kwarg == {} and good.tgt_type == "glob"
    for bad in (
        {"jid": "1", "fun": "test.ping"},
        {"jid": "20240101000000000001"},
        {"jid": "20240101000000000001", "fun": "x", "arg": "notalist"},
        ["x"],
    ):
        with pytest.raises(WireError):
            Job.from_publish(bad)


def test_args_the_salt_way():
    j = Job("20240101000000000001", "test.arg", [1, "k=v", "plain text", {"__kwarg__": True, "a": 2}], {"b": 3})
    assert j.call_args() == ([1, "plain text"], {"k": "v", "a": 2, "b": 3})
    cli = Job.from_cli("20240101000000000001", "test.arg", ["1", "x={a: 1}", "yes"])
    assert cli.call_args() == ([1, True], {"x": {"a": 1}})
    assert cli.fun_args() == [1, True, {"x": {"a": 1}, "__kwarg__": True}]


def test_a_job_returns_with_pub_kwargs_and_success(opts):
    res = Executor(opts, lambda: {"os": "Linux"}).run(job("test.arg", [1], {"x": 2}))
    assert res.error is None and res.success is True and res.retcode == 0
    kwargs = res.ret["kwargs"]
    assert kwargs["x"] == 2 and kwargs["__pub_jid"] == "20240101000000000001"
    assert kwargs["__pub_fun"] == "test.arg" and kwargs["__pub_tgt"] == "m1"
    # a publish's keys, as Salt's minion passes them (salt-call's __pub_pid only for a local call)
    assert kwargs["__pub_user"] == "root" and "__pub_pid" not in kwargs
    assert kwargs["__pub_arg"] == [1, {"__kwarg__": True, "x": 2}]
    assert res.payload() == {
        "jid": "20240101000000000001",
        "fun": "test.arg",
        "fun_args": [1, {"x": 2, "__kwarg__": True}],
        "return": res.ret,
        "retcode": 0,
        "success": True,
    }


def test_retcode_and_success(opts):
    ex = Executor(opts, dict)
    code = ex.run(job("probe.context", [3]))
    assert (code.retcode, code.success) == (3, False)
    false = ex.run(job("probe.result_false"))
    assert (false.retcode, false.success) == (1, False)
    ok = ex.run(job("test.retcode", [0]))
    assert (ok.retcode, ok.success) == (0, True)


def test_errors_become_salt_return_strings(opts):
    ex = Executor(opts, dict)
    missing = ex.run(job("nosuch.fun"))
    assert (missing.error, missing.ret, missing.retcode, missing.out) == (
        "not_found",
        "'nosuch.fun' is not available.",
        1,
        "nested",
    )
    fail = ex.run(job("probe.fail"))
    assert fail.ret == "ERROR: the disk is full" and fail.success is False
    bad = ex.run(job("test.ping", ["extra"], {}))
    assert bad.error == "invocation" and bad.ret.startswith(  # Salt's minion words
        "Passed invalid arguments to test.ping: ping() takes 0 positional arguments but 1 was given\n"
    )
    boom = ex.run(job("test.exception", ["kaput"]))
    assert boom.error == "exception" and boom.ret.startswith("The minion function caused an exception: ")
    assert "kaput" in boom.ret


def test_proc_file_while_running_removed_after(opts):
    res = Executor({**opts, "proc_file_delay": 0}, dict).run(job("probe.proc"))  # Salt's way: at once
    record = json.loads(res.ret)
    assert record["jid"] == "20240101000000000001" and record["fun"] == "probe.proc"
    assert record["pid"] == os.getpid() and record["tid"] == threading.get_ident()
    assert record["started"].startswith("2024, Jan 01 00:00:00") and record["arg"] == []
    assert not (opts["cachedir"] and os.listdir(os.path.join(opts["cachedir"], "proc")))


def test_each_job_gets_its_own_loader_and_thread_name(opts):
    ex = Executor(opts, dict)
    assert ex.run(job("probe.bump")).ret == 1
    assert ex.run(job("probe.bump")).ret == 1
    name = threading.current_thread().name
    assert ex.run(job("probe.who")).ret == "job-20240101000000000001"
    assert threading.current_thread().name == name


def test_a_released_job_frees_what_it_made_without_the_collector(opts):
    """With release (a daemon's thread jobs), a job's modules, its __job__ and what they hold go
    as the job ends, by reference counting; without, they wait in reference cycles for a full
    collection of the cyclic garbage collector."""
    import gc

    held: list = []
    opts["held"] = held
    gc.collect()
    gc.disable()
    try:
        plain = Executor(opts, lambda: {"os": "Debian"})
        assert plain.run(job("probe.hold")).ret == "held"
        assert all(ref() is not None for ref in held)  # cycles: alive until collected
        gc.collect()
        assert all(ref() is None for ref in held)
        held.clear()
        released = Executor(opts, lambda: {"os": "Debian"}, release=True)
        result = released.run(job("probe.hold"))
        assert result.ret == "held" and result.retcode == 0
        assert len(held) == 2 and all(ref() is None for ref in held)  # gone at once
        assert released.run(job("probe.bump")).ret == 1  # the next job loads afresh
        assert released.run(job("state.single", ["test.succeed_with_changes", "x"])).retcode == 0
    finally:
        gc.enable()


def test_pillar_from_the_roots_cached_until_refresh(opts):
    source = LocalPillar(cache=True)
    ex = Executor(opts, dict, source)
    assert ex.run(job("probe.pillar_x")).ret == 42
    with open(os.path.join(opts["pillar_roots"]["base"][0], "data.sls"), "w") as fh:
        fh.write("x: 7\n")
    assert ex.run(job("probe.pillar_x")).ret == 42
    source.refresh()
    assert ex.run(job("probe.pillar_x")).ret == 7


def test_fire_event_reaches_the_given_function(opts):
    seen = []
    res = Executor(opts, dict).run(
        job("state.single", ["test.nop", "thing"], {"fire_event": "my/tag"}),
        fire_event=lambda tag, data: seen.append((tag, data)),
    )
    assert res.success is True and res.out == "highstate"
    assert seen[0][0] == "salt/state_result/20240101000000000001/m1/my/tag"
    assert seen[0][1]["ret"]["result"] is True


def test_a_thread_job_can_be_stopped(opts):
    registry = JobRegistry()
    ex = Executor(opts, dict, registry=registry)
    results = []
    worker = threading.Thread(target=lambda: results.append(ex.run(job("probe.spin", [10]))))
    worker.start()
    wait_until(lambda: registry.get("20240101000000000001"), 5, "the job to start")
    assert registry.signal("20240101000000000001", 0).startswith("Job 20240101000000000001 is running")
    assert "cannot be delivered" in registry.signal("20240101000000000001", signal.SIGHUP)
    msg = registry.signal("20240101000000000001", signal.SIGKILL)
    assert msg == f"Signal 9 sent to job 20240101000000000001 at pid {os.getpid()}"
    worker.join(5)
    assert not worker.is_alive()
    (res,) = results
    assert res.error == "killed" and res.success is False and "killed by signal 9 (SIGKILL)" in res.ret
    assert len(registry) == 0 and registry.signal("20240101000000000001", 9) is None
    assert not list(Path(opts["cachedir"], "proc").glob("*"))


SALT_STYLE = """
import salt.exceptions
from salt.exceptions import CommandExecutionError, CommandNotFoundError, SaltInvocationError

def fails(**kwargs):
    raise CommandExecutionError("the disk is full")

def bad_args(**kwargs):
    raise SaltInvocationError("give me a name")

def no_tool(**kwargs):
    raise CommandNotFoundError("the 'frob' tool is not installed")

def catches(**kwargs):
    try:
        __salt__["probe.fail"]()  # briny's own CommandExecutionError
    except salt.exceptions.CommandExecutionError as exc:
        return f"caught: {exc}"

def base(**kwargs):
    raise salt.exceptions.SaltException("generic")
"""


def test_custom_modules_written_for_salt_import_salt_exceptions(opts, tmp_path):
    """``from salt.exceptions import ...`` works in a custom module (briny provides
    salt.exceptions when no Salt is installed) and gives the returns Salt gives."""
    (tmp_path / "extmods/modules/saltish.py").write_text(textwrap.dedent(SALT_STYLE))
    ex = Executor(opts, dict)
    fails = ex.run(job("saltish.fails"))
    assert (fails.error, fails.ret, fails.retcode) == ("execution", "ERROR: the disk is full", 1)
    bad = ex.run(job("saltish.bad_args"))
    assert (bad.error, bad.ret) == ("invocation", "ERROR executing 'saltish.bad_args': give me a name")
    missing = ex.run(job("saltish.no_tool"))
    assert (
        missing.ret == ("Command required for 'saltish.no_tool' not found: the 'frob' tool is not installed")
        and missing.retcode == 1
    )
    assert ex.run(job("saltish.catches")).ret == "caught: the disk is full"
    generic = ex.run(job("saltish.base"))
    assert (generic.error, generic.ret) == ("execution", "ERROR: generic")


def test_salt_exceptions_holds_brinys_classes_and_nothing_else():
    import importlib

    from briny.common import exceptions
    from briny.common import loader  # noqa: F401 - installs the finder

    mod = importlib.import_module("salt.exceptions")
    assert {name: getattr(mod, name) for name in exceptions.SALT_NAMES} == exceptions.SALT_NAMES
    assert mod.CommandExecutionError is exceptions.CommandExecutionError
    with pytest.raises(ImportError):
        importlib.import_module("salt.utils")


def test_a_job_past_the_proc_file_delay_has_its_file_then_none(opts):
    ex = Executor({**opts, "proc_file_delay": 0.1}, dict)
    res = ex.run(job("probe.wait_proc", [10], jid="20240101000000000002"))
    record = json.loads(res.ret)  # written by the timer while the job still ran
    assert record["jid"] == "20240101000000000002" and record["fun"] == "probe.wait_proc" and record["arg"] == [10]
    assert record["pid"] == os.getpid() and record["user"] == "root" and record["tgt"] == "m1"
    assert not list(Path(opts["cachedir"], "proc").glob("*"))  # removed at its end
    assert not ex.proc_files.written("20240101000000000002")


def test_a_quick_job_writes_no_proc_file_and_find_job_still_answers(opts):
    registry = JobRegistry()
    ex = Executor({**opts, "proc_file_delay": 30}, dict, registry=registry)
    assert ex.run(job("probe.has_proc")).ret is False  # not there while it ran
    assert not list(Path(opts["cachedir"], "proc").glob("*"))
    results = []
    spin = "20240101000000000003"
    worker = threading.Thread(target=lambda: results.append(ex.run(job("probe.spin", [10], {"x": 1}, jid=spin))))
    worker.start()
    try:
        wait_until(lambda: registry.get(spin), 5, "the job to start")
        found = ex.run(job("probe.find", [spin], jid="20240101000000000004")).ret  # the daemon's answer
        assert not ex.proc_files.written(spin) and not (Path(opts["cachedir"], "proc") / spin).exists()
        assert found["jid"] == spin and found["fun"] == "probe.spin" and found["pid"] == os.getpid()
        assert found["arg"] == [10, {"x": 1, "__kwarg__": True}] and found["tgt"] == "m1" and found["user"] == "root"
        assert found["started"].startswith("2024, Jan 01 00:00:00") and "tid" not in found
        assert ex.run(job("probe.find", ["20240101000000000009"], jid="20240101000000000005")).ret == {}
    finally:
        registry.signal(spin, signal.SIGKILL)
        worker.join(5)
    assert results and results[0].error == "killed"


def test_each_job_gets_its_own_grains(opts):
    grains = {"os": "Debian", "ipv4": ["127.0.0.1"]}
    ex = Executor(opts, lambda: grains)
    assert ex.run(job("probe.mutate_grains")).ret == {"os": "changed", "ipv4": ["127.0.0.1", "10.9.9.9"]}
    assert grains == {"os": "Debian", "ipv4": ["127.0.0.1"]}  # the daemon's grains untouched
    assert ex.run(job("probe.mutate_grains")).ret["ipv4"] == ["127.0.0.1", "10.9.9.9"]  # not the last job's
