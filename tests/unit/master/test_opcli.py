"""The ``briny`` CLI against an in-process master (server + operator IPC + event bus) and raw minions.

No daemon processes: the master's loop runs in a thread of the test, the
minions are the raw protocol minions of test_server.py answering publishes.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from briny.common.config import load_master_config
from briny.common.event import EventBus, EventSender
from briny.common.transport import MemoryHub
from briny.master import opcli
from briny.common.exceptions import MasterNotRunning
from briny.master.clientapi import ClientAPIServer, MasterClient
from briny.master.jobcache.sqlite import SqliteJobCache
from briny.master.keys.store import KeyStore
from briny.master.daemon import build_server

from .test_server import RawMinion, rsa_key


class LiveMaster:
    """A master on its own loop in a thread, with minions that behave as told.

    Behaviours: ``ok`` (answer at once), ``fail`` (retcode 1), ``dead``
    (authenticated, never answers), ``slow`` (answers after ``slow`` s and
    says so to find_job).
    """

    def __init__(self, conf: Path, minions: dict[str, str], slow: float = 2.0) -> None:
        self.opts = load_master_config(conf)
        self.minions = minions
        self.slow = slow
        self.seen: list[dict[str, Any]] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.stop_event: asyncio.Event | None = None
        self.error: BaseException | None = None
        self.jobs: set[asyncio.Future[None]] = set()  # the running jobs: a task nothing holds may be collected

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main())
        except BaseException as exc:  # noqa: BLE001 - surfaced by the test through .error
            self.error = exc
            self.ready.set()

    async def _main(self) -> None:
        self.stop_event = asyncio.Event()
        bus = EventBus(self.opts, name="master").start_thread()
        sender = EventSender(self.opts, name="master")
        hub = MemoryHub()
        cache = SqliteJobCache(str(Path(self.opts["cachedir"]) / "jobs.sqlite"))
        server = build_server(self.opts, hub.server, KeyStore(self.opts, fire_events=False), cache, fire=sender.fire)
        capi = ClientAPIServer(self.opts, server)
        capi.bind()
        tasks = [asyncio.ensure_future(server.serve()), asyncio.ensure_future(capi.serve())]
        for i, (mid, how) in enumerate(sorted(self.minions.items())):
            m = RawMinion(hub.client(), mid, rsa_key(i))
            assert (await m.auth())["status"] == "accepted"
            await m.req("grains", grains={"id": mid, "os": "Debian" if i % 2 == 0 else "Arch"})
            tasks.append(asyncio.ensure_future(self._minion(m, how)))
        self.ready.set()
        try:
            await self.stop_event.wait()
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            server.stop()
            capi.close()
            server.close()
            server.grains.close()
            cache.close()
            sender.close()
            bus.stop()

    async def _minion(self, m: RawMinion, how: str) -> None:
        running: dict[str, dict[str, Any]] = {}
        while True:
            pub = await m.next_pub(3600)
            if pub is None:
                continue
            self.seen.append({"id": m.id, **pub})
            if how == "dead":
                continue
            if pub["fun"] == "saltutil.find_job":
                job = running.get(pub["arg"][0], {})
                await m.req("ret", jid=pub["jid"], fun=pub["fun"], fun_args=pub["arg"], **{"return": job})
                continue
            job = asyncio.ensure_future(self._job(m, how, pub, running))
            self.jobs.add(job)
            job.add_done_callback(self.jobs.discard)

    async def _job(self, m: RawMinion, how: str, pub: dict[str, Any], running: dict[str, Any]) -> None:
        running[pub["jid"]] = {"jid": pub["jid"], "fun": pub["fun"], "pid": 1}
        if how == "slow":
            await asyncio.sleep(self.slow)
        ret: Any = True if pub["fun"] == "test.ping" else {"arg": pub["arg"], "kwarg": pub["kwarg"]}
        retcode = 1 if how == "fail" else 0
        if pub["fun"] == "state.apply":
            ret = {
                "test_|-a_|-a_|-succeed_without_changes": {
                    "name": "a",
                    "result": how != "fail",
                    "changes": {},
                    "comment": "done",
                    "__run_num__": 0,
                    "__id__": "a",
                    "__sls__": "x",
                    "duration": 1.0,
                    "start_time": "00:00:00",
                }
            }
        running.pop(pub["jid"], None)
        await m.req(
            "ret",
            jid=pub["jid"],
            fun=pub["fun"],
            fun_args=pub["arg"],
            retcode=retcode,
            success=retcode == 0,
            **{"return": ret},
        )

    def __enter__(self) -> "LiveMaster":
        self.thread.start()
        assert self.ready.wait(30), "the master did not start"
        if self.error:
            raise self.error
        return self

    def __exit__(self, *exc: object) -> None:
        if self.stop_event is not None:
            self.loop.call_soon_threadsafe(self.stop_event.set)
        self.thread.join(10)
        assert not self.thread.is_alive(), "the master did not shut down within 10 s"
        if self.error:
            raise self.error


@pytest.fixture
def conf():
    root = Path(tempfile.mkdtemp(prefix="bo", dir="/tmp"))  # short: IPC paths have a length limit
    conf = root / "conf"
    conf.mkdir()
    (conf / "master").write_text(
        f"root_dir: {root}\npki_dir: pki\ncachedir: cache\nsock_dir: s\n"
        "auto_accept: true\ngather_job_timeout: 1\ntimeout: 1\n"
    )
    yield conf
    shutil.rmtree(root, ignore_errors=True)


def briny(conf: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = opcli.run(["-c", str(conf), *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def json_docs(text: str) -> list[Any]:
    dec, docs, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        doc, i = dec.raw_decode(text, i)
        docs.append(doc)
    return docs


def test_ping_all_prints_each_return(conf):
    with LiveMaster(conf, {"m1": "ok", "m2": "ok"}):
        code, out, err = briny(conf, "*", "test.ping", "--out", "json")
    assert code == 0, err
    assert sorted(json_docs(out), key=str) == [{"m1": True}, {"m2": True}]


def test_a_dead_minion_is_reported_and_the_cli_does_not_hang(conf):
    with LiveMaster(conf, {"m1": "ok", "m2": "dead"}) as master:
        code, out, err = briny(conf, "*", "test.ping")
        assert any(p["fun"] == "saltutil.find_job" and p["id"] == "m2" for p in master.seen)
    assert code == 1
    assert "m1:\n    True" in out
    assert re.search(
        r"m2:\n    Minion did not return\. \[No response\]\n    The minions may not have all "
        r"finished running.*\n\s*\n    briny-run jobs\.lookup_jid \d{20}",
        out,
    )


def test_a_slow_minion_that_still_runs_the_job_is_waited_for(conf):
    with LiveMaster(conf, {"m1": "slow"}, slow=2.2):
        code, out, err = briny(conf, "m1", "test.ping", "-t", "1", "--out", "json")
    assert code == 0, out + err
    assert json_docs(out) == [{"m1": True}]


def test_failures_set_the_exit_status(conf):
    with LiveMaster(conf, {"m1": "ok", "m2": "fail"}):
        code, out, err = briny(conf, "*", "test.arg", "--out", "json")
        assert code == 1 and "ERROR: Minions returned with non-zero exit code" in err
        code, out, err = briny(conf, "m2", "state.apply", "--state-output", "terse", "--no-color")
        assert code == 1
        assert "Failed:" in out or "Result: False" in out or "False" in out


def test_targeting_arguments_and_kwargs(conf):
    with LiveMaster(conf, {"m1": "ok", "m2": "ok", "web": "ok"}) as master:
        code, out, err = briny(conf, "-L", "m1,web", "test.arg", "1", "x={a: 1}", "--out", "json")
        assert code == 0, err
        assert sorted(json_docs(out), key=str)[0] == {"m1": {"arg": [1], "kwarg": {"x": {"a": 1}}}}
        assert sorted(p["id"] for p in master.seen) == ["m1", "web"]
        code, out, err = briny(conf, "-G", "os:Arch", "test.ping", "--out", "json")
        assert json_docs(out) == [{"m2": True}]
        code, out, err = briny(conf, "-C", "G@os:Debian and not E@web", "test.ping", "--out", "json")
        assert json_docs(out) == [{"m1": True}]
        code, out, err = briny(conf, "-C", "G@os:Debian and", "test.ping")
        assert code == 2 and "Invalid compound target" in err


def test_async_static_verbose_and_no_match(conf):
    with LiveMaster(conf, {"m1": "ok", "m2": "ok"}):
        code, out, err = briny(conf, "*", "test.ping", "--async")
        assert code == 0 and re.fullmatch(r"Executed command with job ID: \d{20}\n", out)
        code, out, err = briny(conf, "*", "test.ping", "--static", "--out", "json")
        assert code == 0 and json_docs(out) == [{"m1": True, "m2": True}]
        code, out, err = briny(conf, "m1", "test.ping", "-v")
        assert re.match(r"Executing job with jid \d{20}\n-{43}\n\nm1:\n    True\n$", out)
        code, out, err = briny(conf, "nobody", "test.ping")
        assert code == 2
        assert out == "No minions matched the target. No command was sent, no jid was assigned.\n"
        assert "ERROR: No return received" in err


def test_batches(conf):
    with LiveMaster(conf, {"m1": "ok", "m2": "ok", "m3": "ok"}):
        code, out, err = briny(conf, "*", "test.arg", "-b", "2", "--out", "json")
        assert code == 0, err
        assert out.count("Executing run on") == 2
        assert "Executing run on ['m1', 'm2']" in out
        docs = [
            d
            for d in json_docs(out.replace("Executing run on", "").replace("['m1', 'm2']", "").replace("['m3']", ""))
            if isinstance(d, dict)
        ]
        assert sorted(k for d in docs for k in d if k.startswith("m")) == ["m1", "m2", "m3"]
        code, out, err = briny(conf, "*", "test.ping", "-b", "34%", "--out", "json")
        assert code == 0 and out.count("Executing run on") == 3
        code, out, err = briny(conf, "*", "test.ping", "-b", "x")
        assert code == 2 and "batch size" in err


def test_usage_and_master_not_running(conf):
    code, out, err = briny(conf, "*")
    assert code == 2 and "function are required" in err
    code, out, err = briny(conf, "*", "test.ping")
    assert code == 2 and "master is not running" in err and "briny-master" in err
    code, out, err = briny(conf.parent / "nope", "*", "test.ping")
    assert code == 2 and "does not exist" in err
    with pytest.raises(MasterNotRunning):
        MasterClient(load_master_config(conf)).minions()


def test_a_salt_option_briny_lacks_is_refused_by_name_and_nothing_is_sent(conf):
    """``--return`` (and the eauth options) are Salt's: named, exit 2, no job published; the job must
    never run without the returner it asked for. The later ping proves nothing went out before."""
    with LiveMaster(conf, {"m1": "ok"}) as master:
        code, out, err = briny(conf, "*", "test.ping", "--return", "mysql")
        assert (code, out) == (2, "")
        assert err == (
            "briny: --return mysql (returners) is a Salt option briny does not support yet; nothing was sent "
            "(docs/not-yet.md)\n"
        )
        code, out, err = briny(conf, "-a", "pam", "--return=redis", "--return_config", "alt", "*", "test.ping")
        assert code == 2 and err.startswith(
            "briny: --auth pam (external auth), --return redis (returners), --return_config alt (returners) are "
            "Salt options briny does not support yet; nothing was sent"
        )
        code, out, err = briny(conf, "-s", "*", "test.ping", "--out", "json")  # Salt's -s is --static
        assert code == 0 and json_docs(out) == [{"m1": True}], err
        assert [p["fun"] for p in master.seen] == ["test.ping"]


def test_ipc_commands(conf):
    with LiveMaster(conf, {"m1": "ok"}) as master:
        with MasterClient(master.opts) as client:
            assert client.minions() == {"accepted": ["m1"], "connected": ["m1"]}
            with pytest.raises(Exception, match="unknown command"):
                client.request({"cmd": "nope"})
            pub = client.publish("m1", "test.ping")
            fj = client.find_job(pub["jid"], ["m1"])
            assert fj["minions"] == ["m1"] and re.fullmatch(r"\d{20}", fj["jid"])
