"""Pillar from the master on the minion: the real master (master/server.py) and a real
:class:`MinionAgent` over ``transport.MemoryHub``; jobs see the master's pillar, keep it, and
``saltutil.refresh_pillar`` asks the master again. Plus the executor's merge of ``pillar=``
overrides over the master's pillar, and what a job gets when the master does not answer."""

from __future__ import annotations

import asyncio
import os
import textwrap
from pathlib import Path
from typing import Any

from briny.common.config import MASTER_DEFAULTS, MINION_DEFAULTS, apply_config
from briny.common.transport import MemoryHub
from briny.master.jobcache.sqlite import SqliteJobCache
from briny.master.keys.store import KeyStore
from briny.master.daemon import build_server
from briny.minion.agent import MinionAgent
from briny.minion.executor import Executor, Job
from briny.minion.pillar import LocalPillar, MasterPillar

from tests.waiting import until

from ..pairsupport import return_of
from .test_agent_support import Running, minion_opts, run


def rewrite(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(textwrap.dedent(text))
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


def master_opts(root: Path) -> dict[str, Any]:
    pillar = root / "pillar"
    pillar.mkdir(parents=True)
    (pillar / "top.sls").write_text("base:\n  '*':\n    - data\n  'color:blue':\n    - match: grain\n    - blue\n")
    (pillar / "data.sls").write_text("size: 1\nwho: {{ grains['id'] }}\n")
    (pillar / "blue.sls").write_text("sky: {{ grains['color'] }}\n")
    return apply_config(
        {
            "root_dir": str(root),
            "pki_dir": "pki",
            "cachedir": "cache",
            "sock_dir": "sock",
            "auto_accept": True,
            "pillar_roots": {"base": [str(pillar)]},
        },
        MASTER_DEFAULTS,
        "test",
    )


class Master:
    """The real master server on a MemoryHub, with its events recorded."""

    def __init__(self, opts: dict[str, Any]) -> None:
        self.hub = MemoryHub()
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.cache = SqliteJobCache(os.path.join(opts["cachedir"], "jobs.sqlite"))
        self.server = build_server(
            opts,
            self.hub.server,
            KeyStore(opts, fire_events=False),
            self.cache,
            fire=lambda t, d: self.events.append((t, d)),
        )
        self.task: asyncio.Task[None] | None = None

    def start(self) -> "Master":
        self.task = asyncio.ensure_future(self.server.serve())
        return self

    async def stop(self) -> None:
        self.server.stop()
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        self.server.close()
        self.server.grains.close()
        self.cache.close()

    async def call(self, minion_id: str, fun: str, *arg: Any, timeout: float = 10) -> Any:
        job = await self.server.publisher.publish(minion_id, "glob", fun, list(arg))
        assert job.get("minions") == [minion_id], job
        return await return_of(self.events, job["jid"], minion_id, timeout)

    async def wait_grains(self, minion_id: str) -> None:
        await until(lambda: self.server.grains.get(minion_id) is not None, 10, "the minion's grains")


def test_jobs_see_the_masters_pillar_and_refresh_pillar_asks_again(tmp_path):
    mopts = master_opts(tmp_path / "master")
    data = tmp_path / "master" / "pillar" / "data.sls"

    async def main() -> list[Any]:
        master = Master(mopts).start()
        agent = MinionAgent(
            minion_opts(tmp_path / "minion", "m1", file_client="remote", pillar={"from": "config"}),
            master.hub.client,
            grains={"id": "m1", "color": "blue"},
            event_bus=False,
        )
        out: list[Any] = []
        try:
            async with Running(agent):
                await asyncio.wait_for(agent.connected.wait(), 10)
                await master.wait_grains("m1")
                out.append(await master.call("m1", "pillar.items"))
                rewrite(data, "size: 2\nwho: {{ grains['id'] }}\n")
                out.append(await master.call("m1", "pillar.get", "size"))  # kept on the minion
                out.append(master.server.publisher.compiler.pillars.compiles)
                out.append(await master.call("m1", "saltutil.refresh_pillar"))
                out.append(master.server.publisher.compiler.pillars.compiles)  # asked again at once
                out.append(await master.call("m1", "pillar.get", "size"))
                out.append(await master.call("m1", "pillar.get", "sky"))
        finally:
            await master.stop()
        return out

    items, kept, compiles_before, refreshed, compiles_after, size, sky = run(main())
    assert items == {"size": 1, "who": "m1", "sky": "blue"}  # the master's, not the config's
    assert kept == 1
    assert refreshed is True and compiles_before == 1 and compiles_after == 2
    assert size == 2 and sky == "blue"


def test_a_pillar_with_errors_stops_state_runs_on_the_minion(tmp_path):
    mopts = master_opts(tmp_path / "master")
    (tmp_path / "master" / "pillar" / "blue.sls").write_text("sky: {{ salt['cmd.run']('id') }}\n")

    async def main() -> tuple[Any, Any]:
        master = Master(mopts).start()
        agent = MinionAgent(
            minion_opts(tmp_path / "minion", "m1", file_client="remote"),
            master.hub.client,
            grains={"id": "m1", "color": "blue"},
            event_bus=False,
        )
        try:
            async with Running(agent):
                await asyncio.wait_for(agent.connected.wait(), 10)
                await master.wait_grains("m1")
                errors = await master.call("m1", "pillar.get", "_errors")
                state = await master.call("m1", "state.sls", "anything")
        finally:
            await master.stop()
        return errors, state

    errors, state = run(main())
    assert errors == ["Rendering SLS 'blue' failed. Please see master log for details."]
    assert state[0] == "Pillar failed to render with the following messages:" and state[1:] == errors


# -- the executor with a master pillar source ------------------------------------------------------


def executor_opts(tmp_path: Path) -> dict[str, Any]:
    srv = tmp_path / "srv"
    srv.mkdir()
    (srv / "show.sls").write_text(
        textwrap.dedent("""\
        show:
          test.succeed_without_changes:
            - name: "{{ pillar['a'] }}-{{ pillar['b'] }}-{{ pillar.get('c', 'none') }}"
        """)
    )
    return apply_config(
        {
            "id": "m1",
            "root_dir": str(tmp_path),
            "cachedir": "cache",
            "file_client": "local",
            "file_roots": {"base": [str(srv)]},
            "pillar_roots": {"base": []},
            "pillar": {"from": "config"},
        },
        MINION_DEFAULTS,
        "test",
    )


def test_pillar_overrides_merge_over_the_masters_pillar(tmp_path):
    asked: list[dict[str, Any]] = []

    def fetch(payload: dict[str, Any]) -> dict[str, Any]:
        asked.append(payload)
        return {"pillar": {"a": "master", "b": "master", "nested": {"x": 1}}}

    ex = Executor(executor_opts(tmp_path), dict, MasterPillar(fetch))
    res = ex.run(Job("20240101000000000001", "state.sls", ["show"], {"pillar": {"b": "cli", "c": "cli"}}))
    (ret,) = res.ret.values()
    assert ret["name"] == "master-cli-cli" and ret["result"] is True
    res = ex.run(Job("20240101000000000002", "pillar.raw"))
    assert res.ret == {"a": "master", "b": "master", "nested": {"x": 1}}  # overrides do not stick
    assert len(asked) == 1


def test_pillar_items_asks_the_master_each_call_and_keeps_nothing(tmp_path):
    served = iter([{"a": "kept"}, {"a": "edited"}, {"a": "edited again"}])
    asked: list[dict[str, Any]] = []

    def fetch(payload: dict[str, Any]) -> dict[str, Any]:
        asked.append(payload)
        return {"pillar": next(served)}

    ex = Executor(executor_opts(tmp_path), dict, MasterPillar(fetch))
    assert ex.run(Job("20240101000000000001", "pillar.raw")).ret == {"a": "kept"}
    assert ex.run(Job("20240101000000000002", "pillar.items")).ret == {"a": "edited"}
    res = ex.run(Job("20240101000000000003", "pillar.items", [], {"pillar": {"b": 1}, "pillarenv": "dev"}))
    assert res.ret == {"a": "edited again", "b": 1}
    assert asked[-1]["pillarenv"] == "dev"
    # the in-memory pillar is still the kept one
    assert ex.run(Job("20240101000000000004", "pillar.get", ["a"])).ret == "kept"
    assert ex.run(Job("20240101000000000005", "pillar.item", ["a"])).ret == {"a": "kept"}
    assert len(asked) == 3


def test_pillar_items_without_an_answer_is_an_error_not_the_kept_pillar(tmp_path):
    replies: list[dict[str, Any] | None] = [{"pillar": {"a": "kept"}}, None]
    ex = Executor(executor_opts(tmp_path), dict, MasterPillar(lambda payload: replies.pop(0)))
    res = ex.run(Job("20240101000000000001", "pillar.items"))
    assert res.retcode == 1
    assert "no answer from the master to the pillar request" in str(res.ret)


def test_no_answer_from_the_master_is_not_kept(tmp_path):
    replies: list[dict[str, Any] | None] = [None, {"pillar": {"a": 1}}]
    source = MasterPillar(lambda payload: replies.pop(0))
    ex = Executor(executor_opts(tmp_path), dict, source)
    assert ex.run(Job("20240101000000000001", "pillar.raw")).ret == {"from": "config"}
    assert ex.run(Job("20240101000000000002", "pillar.raw")).ret == {"a": 1}  # asked again
    # a master that answers without a pillar (it serves none) is an answer: kept
    answers = [{"error": "unknown request 'pillar'"}]
    ex = Executor(ex.opts, dict, MasterPillar(lambda payload: answers.pop(0)))
    assert ex.run(Job("20240101000000000003", "pillar.raw")).ret == {"from": "config"}
    assert ex.run(Job("20240101000000000004", "pillar.raw")).ret == {"from": "config"}  # not asked again


def test_reload_reports_whether_the_master_answered(tmp_path):
    replies: list[dict[str, Any] | None] = [None, {"pillar": {"a": 2}}]
    source = MasterPillar(lambda payload: replies.pop(0))
    assert source.reload({}) is False
    assert source.reload({"pillarenv": "dev"}) is True
    assert source.get({}, {}, None) == {"a": 2}


def masterless_daemon(tmp_path: Path, pillar_sls: str) -> tuple[Path, Executor]:
    """(the pillar root, an executor keeping its pillar as a masterless daemon does) over a
    pillar tree of one SLS, ``p``."""
    opts = executor_opts(tmp_path)
    proot = tmp_path / "pillar"
    proot.mkdir()
    (proot / "top.sls").write_text("base:\n  '*':\n    - p\n")
    (proot / "p.sls").write_text(pillar_sls)
    opts["pillar_roots"] = {"base": [str(proot)]}
    return proot, Executor(opts, dict, LocalPillar(cache=True))


def test_a_masterless_daemon_keeps_its_pillar_but_pillar_items_renders_afresh(tmp_path):
    proot, ex = masterless_daemon(tmp_path, "a: before\n")
    assert ex.run(Job("20240101000000000001", "pillar.get", ["a"])).ret == "before"
    (proot / "p.sls").write_text("a: after\n")
    assert ex.run(Job("20240101000000000002", "pillar.items")).ret["a"] == "after"
    assert ex.run(Job("20240101000000000003", "pillar.get", ["a"])).ret == "before"
    assert ex.run(Job("20240101000000000004", "pillar.get", ["a"], {"pillarenv": "base"})).ret == "after"


def test_a_pillar_template_calling_pillar_items_does_not_loop(tmp_path):
    _proot, ex = masterless_daemon(tmp_path, "a: 1\nkeys_seen: {{ salt['pillar.items']() | length }}\n")
    res = ex.run(Job("20240101000000000001", "pillar.items"))
    assert res.retcode == 0 and res.ret["a"] == 1 and isinstance(res.ret["keys_seen"], int), res.ret
