"""Process jobs (``multiprocessing: True``): the launcher starts a process per job, the daemon's
relay answers its requests over the job channel, a signal or a crash becomes a return."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from briny.common.config import MINION_DEFAULTS, apply_config
from briny.minion.executor import Job
from briny.minion.pillar import LocalPillar, StaticPillar
from briny.minion.jobregistry import JobRegistry
from briny.minion.launcher import Launcher
from briny.minion.procjobs import DaemonLinks, ProcessJobs
from tests.waiting import until, wait_until

JID = "20240101000000000001"
MODULE = """
    import ctypes, os, time

    def ask(**kwargs):
        return __job__.master({"cmd": "echo", "x": 1}, 3)

    def fire(**kwargs):
        __job__.fire_event("my/tag", {"n": 1})
        return "fired"

    def where(**kwargs):
        return [os.getpid(), os.getpgid(0) == os.getpid(), __grains__.get("g"), __pillar__.get("p")]

    def spin(**kwargs):
        open(kwargs["flag"], "w").close()
        while True:
            time.sleep(0.01)

    def jobs(**kwargs):
        return sorted(__job__.jobs.snapshot())

    def refresh(**kwargs):
        return [__salt__["saltutil.refresh_pillar"](), __salt__["saltutil.refresh_grains"]()]

    def bye(**kwargs):
        os._exit(7)

    def new_module(**kwargs):
        folder = os.path.join(__opts__["extension_modules"], "modules")
        with open(os.path.join(folder, "fresh.py"), "w") as fh:
            fh.write("def ping():\\n    return 'fresh'\\n")
        return __salt__["saltutil.refresh_modules"]()

    def segv(**kwargs):
        ctypes.string_at(0)
"""


@pytest.fixture
def opts(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "extmods" / "modules").mkdir(parents=True)
    (tmp_path / "extmods" / "modules" / "probe.py").write_text(textwrap.dedent(MODULE))
    (tmp_path / "pillar").mkdir()
    (tmp_path / "pillar" / "top.sls").write_text("base:\n  '*':\n    - data\n")
    (tmp_path / "pillar" / "data.sls").write_text("p: rendered\n")
    return apply_config(
        {
            "id": "m1",
            "root_dir": str(tmp_path),
            "cachedir": "cache",
            "file_client": "remote",
            "extension_modules": str(tmp_path / "extmods"),
            "pillar_roots": {"base": [str(tmp_path / "pillar")]},
        },
        MINION_DEFAULTS,
        "test",
    )


class Daemon:
    """The daemon's side of the relay, recording what the job asked."""

    def __init__(self, opts: dict[str, Any], pillar: Any) -> None:
        self.requests: list[dict[str, Any]] = []
        self.events: list[tuple[str, str, dict[str, Any]]] = []
        self.refreshed: list[str] = []
        self.pool = concurrent.futures.ThreadPoolExecutor(2)
        self.links = DaemonLinks(
            opts,
            lambda: {"g": "grain"},
            pillar,
            self.request,
            self.event,
            lambda: self.refreshed.append("pillar") or True,
            lambda: self.refreshed.append("grains") or True,
            self.pool,
        )

    async def request(self, payload: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        self.requests.append(payload)
        return {"echo": payload, "timeout": timeout}

    def event(self, jid: str, tag: str, data: dict[str, Any]) -> None:
        self.events.append((jid, tag, data))


@pytest.fixture
def launcher(opts: dict[str, Any]) -> Iterator[Launcher]:
    launcher = Launcher.start(opts)
    try:
        yield launcher
    finally:
        launcher.stop()


def run(procs: ProcessJobs, *jobs: Job) -> list[Any]:
    async def go() -> list[Any]:
        return list(await asyncio.gather(*(procs.run(j) for j in jobs)))

    return asyncio.run(asyncio.wait_for(go(), 60))


def test_a_job_runs_in_its_own_process_and_reaches_the_daemon_only_through_its_channel(opts, launcher):
    daemon = Daemon(opts, StaticPillar())
    procs = ProcessJobs(daemon.links, JobRegistry(), launcher)
    opts["pillar"] = {"p": "static"}
    where, ask, fire, jobs, refresh = run(
        procs,
        Job(JID, "probe.where"),
        Job("20240101000000000002", "probe.ask"),
        Job("20240101000000000003", "probe.fire"),
        Job("20240101000000000004", "probe.jobs"),
        Job("20240101000000000005", "probe.refresh"),
    )
    assert where.retcode == 0, where.ret
    pid, leader, grain, pillar = where.ret
    assert pid not in (os.getpid(), launcher.pid) and leader  # its own process group
    assert (grain, pillar) == ("grain", "static")
    assert ask.ret == {"echo": {"cmd": "echo", "x": 1}, "timeout": 3}
    assert daemon.requests == [{"cmd": "echo", "x": 1}]
    assert fire.ret == "fired" and daemon.events == [("20240101000000000003", "my/tag", {"n": 1})]
    assert set(jobs.ret) >= {"20240101000000000004"}  # the daemon's registry, seen from the job
    assert refresh.ret == [True, True] and sorted(daemon.refreshed) == ["grains", "pillar"]
    assert len(procs.registry) == 0
    assert not list((Path(opts["cachedir"]) / "proc").glob("*"))


def test_a_module_change_in_a_job_process_reaches_the_daemons_folder_listings(opts, launcher):
    """saltutil.refresh_modules (and a sync that changed something) in a job process tells the
    daemon: its kept listing of extension_modules is read again, so its own loaders (thread
    jobs, beacons, the reactor) see the new module at once, not only after a miss a second on."""
    from briny.common import loader, modfolders

    folder = Path(opts["extension_modules"]) / "modules"
    assert "fresh" not in modfolders.FOLDERS.listing(folder).names  # the daemon's listing, kept
    procs = ProcessJobs(Daemon(opts, StaticPillar()).links, JobRegistry(), launcher)
    (result,) = run(procs, Job(JID, "probe.new_module"))
    assert result.retcode == 0 and result.ret is True
    assert "fresh" in modfolders.FOLDERS.listing(folder).names
    assert loader.minion_mods(opts, {}, {})["fresh.ping"]() == "fresh"


def test_a_local_pillar_is_rendered_once_and_kept_by_the_daemon(opts):
    opts = {**opts, "file_client": "local"}
    source = LocalPillar(cache=True)
    procs = ProcessJobs(Daemon(opts, source).links, JobRegistry(), Launcher.start(opts))
    try:
        _local_pillar(procs, source, opts)
    finally:
        procs.close()


def _local_pillar(procs: ProcessJobs, source: LocalPillar, opts: dict[str, Any]) -> None:
    (first,) = run(procs, Job(JID, "probe.where"))
    assert first.ret[3] == "rendered" and source.kept() == {"p": "rendered"}
    (Path(opts["pillar_roots"]["base"][0]) / "data.sls").write_text("p: changed\n")
    (second,) = run(procs, Job("20240101000000000002", "probe.where"))
    assert second.ret[3] == "rendered"  # kept until saltutil.refresh_pillar
    source.refresh()
    (third,) = run(procs, Job("20240101000000000003", "probe.where"))
    assert third.ret[3] == "changed"


def test_a_signalled_or_crashed_job_is_reported_and_the_next_one_runs(opts, launcher, tmp_path):
    registry = JobRegistry()
    procs = ProcessJobs(Daemon(opts, StaticPillar()).links, registry, launcher)
    flag = tmp_path / "spinning"

    async def go() -> list[Any]:
        spin = asyncio.ensure_future(procs.run(Job(JID, "probe.spin", kwarg={"flag": str(flag)})))
        try:
            await until(flag.exists, 20, "the job to start")
            pid = registry.snapshot()[JID].pid
            assert registry.signal(JID, signal.SIGTERM) == f"Signal 15 sent to job {JID} at pid {pid}"
        except BaseException:
            registry.signal(JID, signal.SIGKILL)  # never left spinning
            raise
        return [await asyncio.wait_for(spin, 20)] + list(
            await asyncio.gather(
                procs.run(Job("20240101000000000002", "probe.bye")),
                procs.run(Job("20240101000000000003", "probe.segv")),
                procs.run(Job("20240101000000000004", "test.ping")),
            )
        )

    spun, bye, segv, ping = asyncio.run(asyncio.wait_for(go(), 60))
    assert spun.error == "killed" and spun.retcode == 1 and spun.success is False
    assert spun.ret == f"ERROR: job {JID} was killed by signal 15 (SIGTERM)"
    assert bye.ret == "ERROR: job 20240101000000000002 ended without a return (exit status 7)"
    assert segv.ret == "ERROR: job 20240101000000000003 was killed by signal 11 (SIGSEGV)"
    assert ping.ret is True and ping.retcode == 0
    assert len(registry) == 0
    assert not list((Path(opts["cachedir"]) / "proc").glob("*"))  # the killed job's proc file is gone


def test_a_launcher_that_died_is_replaced_by_a_fresh_interpreter(opts, launcher):
    procs = ProcessJobs(Daemon(opts, StaticPillar()).links, JobRegistry(), launcher)
    os.kill(launcher.pid, signal.SIGKILL)
    wait_until(lambda: not launcher.alive(), 10, "the launcher to die")  # SIGKILL lands asynchronously
    stop = threading.Event()
    ticker = threading.Thread(target=stop.wait)  # a thread: the new launcher cannot be forked
    ticker.start()
    try:
        (ping,) = run(procs, Job(JID, "test.ping"))
    finally:
        stop.set()
        ticker.join(10)
        procs.close()
    assert ping.ret is True
    assert procs.launcher is not launcher and procs.launcher.popen is not None


def test_a_launcher_that_dies_while_taking_a_job_is_replaced_and_asked_again(opts, launcher, monkeypatch):
    # the race the test above can hit: just killed, the launcher still looks alive, takes the job
    # and vanishes under it; the job must go to a new launcher, not fail
    procs = ProcessJobs(Daemon(opts, StaticPillar()).links, JobRegistry(), launcher)
    monkeypatch.setattr(launcher, "alive", lambda: not launcher.closed)
    os.kill(launcher.pid, signal.SIGKILL)
    os.waitpid(launcher.pid, 0)  # dead for sure, and still "alive" to the daemon
    try:
        (ping,) = run(procs, Job(JID, "test.ping"))
    finally:
        procs.close()
    assert ping.ret is True
    assert procs.launcher is not launcher and launcher.closed


def test_process_count_max_queues_jobs_beyond_the_limit(opts, launcher, tmp_path):
    registry = JobRegistry()
    procs = ProcessJobs(Daemon({**opts, "process_count_max": 1}, StaticPillar()).links, registry, launcher)
    flag = tmp_path / "spinning"

    async def go() -> Any:
        spin = asyncio.ensure_future(procs.run(Job(JID, "probe.spin", kwarg={"flag": str(flag)})))
        ping = asyncio.ensure_future(procs.run(Job("20240101000000000002", "test.ping")))
        try:
            await until(flag.exists, 20, "the first job to start")
            # a job that got a slot is in the registry from its first step on: the second one waits
            running = sorted(registry.snapshot())
            assert running == [JID] and not ping.done(), running
        finally:
            registry.signal(JID, signal.SIGKILL)  # never left spinning, whatever failed
        return await asyncio.wait_for(ping, 20), await asyncio.wait_for(spin, 20)

    ping, spun = asyncio.run(asyncio.wait_for(go(), 60))
    assert ping.ret is True and spun.error == "killed"
