"""The master's seams: a MasterServer built with fakes instead of the daemon's subsystems, and
the key store read one way (master/keywatch.py)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from briny.common.transport import MemoryHub
from briny.master.grainscache import GrainsCache
from briny.master.jobcache_sqlite import SqliteJobCache
from briny.master.keys import KeyStore
from briny.master.keywatch import KeyWatch
from briny.master.server import MasterServer

from .test_server import RawMinion, rsa_key


class FakeCompiler:
    """Compiles every state.apply to a marker naming the minion."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def wants(self, fun: Any) -> bool:
        return fun == "state.apply"

    def roots_signature(self) -> str:
        return "roots"

    def compile_for(self, minion_id: str, load: dict[str, Any], roots: str) -> dict[str, Any]:
        self.asked.append(minion_id)
        return {"fake": minion_id, "roots": roots}


def test_a_server_built_with_fakes_publishes_their_compiles_and_serves_nothing_else(master_opts):
    master_opts["auto_accept"] = True

    async def main() -> None:
        hub = MemoryHub()
        cache = SqliteJobCache(os.path.join(master_opts["cachedir"], "jobs.sqlite"))
        grains = GrainsCache(master_opts["cachedir"])
        compiler = FakeCompiler()
        server = MasterServer(
            master_opts, hub.server, KeyStore(master_opts, fire_events=False), cache, grains=grains, compiler=compiler
        )
        task = asyncio.ensure_future(server.serve())
        try:
            m = RawMinion(hub.client(), "m1", rsa_key(0))
            assert (await m.auth())["status"] == "accepted"
            assert (await m.req("grains", grains={"os": "Debian"}))[0] == "rep"
            assert grains.get("m1") == {"os": "Debian"}
            res = await server.publish("m1", "glob", "state.apply")
            pub = await m.next_pub()
            assert pub["jid"] == res["jid"] and pub["compiled"] == {"fake": "m1", "roots": "roots"}
            assert compiler.asked == ["m1"]
            res = await server.publish("m1", "glob", "test.ping")
            assert "compiled" not in await m.next_pub()
            # the daemon registers the pillar and the file server; this server has neither
            assert await m.req("pillar") == ("rep", {"error": "unknown request 'pillar'"})
            assert (await m.req("ping"))[0] == "rep"
        finally:
            server.stop()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            server.close()
            grains.close()
            cache.close()

    asyncio.run(asyncio.wait_for(main(), 30))


def test_the_key_watch_reads_again_only_after_a_change(master_opts, pubkeys):
    keys = KeyStore(master_opts, fire_events=False)
    keys.ensure_dirs()
    ticks = iter(range(100))
    watch = KeyWatch(keys, clock=lambda: float(next(ticks)))
    first = watch.read()
    assert first.accepted == frozenset() and first.known == frozenset() and first.read_at == 0.0
    assert watch.read() is first  # nothing changed: the same view
    other = KeyStore(master_opts, fire_events=False)  # briny-key
    other.authorize("m1", pubkeys[0], auto_accept=True)
    other.authorize("m2", pubkeys[1])
    view = _changed(watch, first)
    assert view.accepted == {"m1"} and view.known == {"m1", "m2"} and view.generation > first.generation
    other.reject("m1", include_accepted=True)
    newer = _changed(watch, view)
    assert newer.accepted == frozenset() and newer.known == {"m1", "m2"}


def _changed(watch: KeyWatch, last: Any) -> Any:
    """The watch's first view after ``last`` (a change in one timestamp tick shows within ~20 ms)."""
    deadline = time.monotonic() + 5
    while (view := watch.read()) is last and time.monotonic() < deadline:
        time.sleep(0.005)
    return view
