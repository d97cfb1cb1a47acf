"""The master's seams: a MasterServer built with fakes instead of the daemon's subsystems, and
the key store read one way (master/keys/watch.py)."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from briny.common.transport import MemoryHub
from briny.master.grainscache import GrainsCache
from briny.master.jobcache.sqlite import SqliteJobCache
from briny.master.keys.store import KeyStore
from briny.master.keys.watch import KeyWatch
from briny.master.server import MasterServer

from .test_server import Ctx, RawMinion, rsa_key, run_master


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
            res = await server.publisher.publish("m1", "glob", "state.apply")
            pub = await m.next_pub()
            assert pub["jid"] == res["jid"] and pub["compiled"] == {"fake": "m1", "roots": "roots"}
            assert compiler.asked == ["m1"]
            res = await server.publisher.publish("m1", "glob", "test.ping")
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


# -- sessions and key store reads racing an auth --------------------------------------------------


def test_a_key_rejected_right_after_its_auth_decision_gets_no_lasting_session(master_opts):
    """The operator rejects the key between the auth's key store decision and the session: whether
    the master reads the key store before the session opens or after, the session goes."""
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        loop = asyncio.get_running_loop()
        real = c.server.auth.decide
        apply_first = [False]

        def decide_then_reject(req: Any) -> Any:
            result = real(req)
            KeyStore(c.opts, fire_events=False).reject(req.id, include_accepted=True)
            if apply_first[0]:  # the housekeeping reads (and applies) before the session opens
                asyncio.run_coroutine_threadsafe(_applied_after(c, result.decided_at), loop).result(10)
            return result

        c.server.auth.decide = decide_then_reject  # type: ignore[method-assign]
        m1 = c.minion("m1", 0)
        assert (await m1.auth())["status"] == "accepted"
        assert "m1" in c.server.sessions  # no read of the key store since the decision
        await _applied_after(c, c.server.sessions["m1"].since)
        assert "m1" not in c.server.sessions
        apply_first[0] = True
        m2 = c.minion("m2", 1)
        assert (await m2.auth())["status"] == "accepted"
        assert "m2" not in c.server.sessions
        assert await m2.req("ping") == ("err", {"error": "unauthenticated"})

    run_master(master_opts, body)


def test_a_key_store_read_from_before_an_auto_accept_keeps_the_new_session(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        before = await asyncio.get_running_loop().run_in_executor(None, c.server.keywatch.read)
        assert "m1" not in before.known
        m1 = await c.accepted("m1", 0)  # auto-accepted: its key written after that read
        c.server.apply_keys(before)  # a slow read, applied late
        assert "m1" in c.server.sessions and c.server.grains.get("m1") == {"id": "m1"}
        assert (await m1.req("ping"))[0] == "rep"

    run_master(master_opts, body)


async def _applied_after(c: Ctx, moment: float) -> None:
    """Read the key store (as the housekeeping does) until a view read after ``moment`` is applied
    (a change within one timestamp tick shows at the next rescan, within ~20 ms)."""
    deadline = time.monotonic() + 5
    while True:
        await c.server.check_keys()
        view = c.server._keys_view
        if (view is not None and view.read_at > moment) or time.monotonic() > deadline:
            return
        await asyncio.sleep(0.005)
