"""The master's logic (master/server.py) over the in-memory transport, with a raw minion.

The raw minion below is written straight from ``wire`` and ``crypto`` so
every security case is explicit: what is sealed with which key, what is
replayed, what is forged.
"""

from __future__ import annotations

import asyncio
import threading
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from briny.common import crypto, handshake, wire
from briny.common.exceptions import AuthError
from briny.common.transport import MemoryHub, topic_for
from briny.master.jobcache.sqlite import SqliteJobCache
from briny.master.keys.store import KeyStore
from briny.master.server import NOT_OPENED, SERVE_TURN, MasterServer
from briny.master.tags import check_event_tag


from ..pairsupport import running_master, server_idle

_RSA: list[crypto.RSAPrivate] = []


def rsa_key(i: int) -> crypto.RSAPrivate:
    """The i-th minion key of this test session (RSA is slow to make)."""
    while len(_RSA) <= i:
        _RSA.append(crypto.generate_rsa())
    return _RSA[i]


class RawMinion:
    """A minion reduced to the protocol: auth, sealed requests, signed publishes."""

    def __init__(self, client: Any, minion_id: str, key: crypto.RSAPrivate) -> None:
        self.client = client
        self.id = minion_id
        self.key = key
        self.session: bytes | None = None
        self.sign_pub: bytes | None = None
        self.guard = wire.ReplayGuard()
        self.last_auth = b""  # the last signed auth frame sent (replay tests)
        client.subscribe(topic_for(minion_id))

    async def challenge(self, token: bytes) -> handshake.Offer:
        """A hello, and the master's challenge."""
        raw = await self.client.request(handshake.hello(self.id, token), 10)
        assert raw is not None, "no challenge"
        return handshake.read_challenge(wire.decode(raw), self.id, token)

    async def auth(self) -> dict[str, Any]:
        """The whole handshake; the master's signed answer (checked) as a map."""
        token = os.urandom(32)
        offer = await self.challenge(token)
        self.last_auth = handshake.auth_request(
            self.id, self.key, crypto.public_pem(self.key), token, offer.challenge, crypto.fingerprint(offer.master_pub)
        )
        raw = await self.client.request(self.last_auth, 10)
        assert raw is not None, "no auth reply"
        reply = wire.decode(raw)
        assert reply.kind == "auth_reply" and reply.id == self.id
        handshake.read_auth_reply(reply, self.id, token, offer.challenge)  # echo and signature
        body = wire.clear_payload(reply)
        if body["status"] == "accepted":
            self.session = crypto.rsa_decrypt(self.key, body["session"])
            self.sign_pub = body["sign_pub"]
        else:
            assert "session" not in body and "sign_pub" not in body
            self.session = None
        return body

    def frame(self, cmd: str, key: bytes | None = None, id_: str | None = None, **payload: Any) -> bytes:
        env = wire.sealed("req", id_ or self.id, key or self.session or os.urandom(32), {"cmd": cmd, **payload})
        return env.encode()

    async def send(self, frame: bytes, timeout: float = 5) -> tuple[str, dict[str, Any]] | None:
        raw = await self.client.request(frame, timeout)
        if raw is None:
            return None
        env = wire.decode(raw)
        if env.kind == "err":
            return "err", wire.clear_payload(env)
        assert env.kind == "rep" and env.id == self.id
        assert self.session is not None
        payload = wire.open_reply(env, self.session, wire.decode(frame).nonce)
        self.guard.check(env)
        return "rep", payload

    async def req(self, cmd: str, timeout: float = 5, **payload: Any) -> tuple[str, dict[str, Any]] | None:
        return await self.send(self.frame(cmd, **payload), timeout)

    async def next_pub(self, timeout: float = 2) -> dict[str, Any] | None:
        try:
            async with asyncio.timeout(timeout):  # not wait_for: on 3.11 it can swallow a cancel
                topic, raw = await self.client.recv_publish()
        except TimeoutError:
            return None
        assert topic == topic_for(self.id)
        env = wire.decode(raw)
        assert env.kind == "pub" and env.id == self.id
        assert self.sign_pub is not None
        wire.verify(env, self.sign_pub)
        payload = wire.open_sealed(env, self.session)
        self.guard.check(env)
        return payload


@dataclass
class Ctx:
    hub: MemoryHub
    server: MasterServer
    keys: KeyStore
    cache: SqliteJobCache
    opts: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def minion(self, minion_id: str, key_index: int = 0) -> RawMinion:
        return RawMinion(self.hub.client(), minion_id, rsa_key(key_index))

    async def accepted(self, minion_id: str, key_index: int = 0, grains: dict | None = None) -> RawMinion:
        """A minion whose key is accepted, authenticated, with grains sent."""
        m = self.minion(minion_id, key_index)
        if (await m.auth())["status"] == "pending":
            self.keys.accept(minion_id)
            assert (await m.auth())["status"] == "accepted"
        assert (await m.req("grains", grains=grains or {"id": minion_id}))[0] == "rep"
        return m

    def tags(self) -> list[str]:
        return [t for t, _ in self.events]

    async def idle(self) -> None:
        """Until the master handled every frame sent so far and finished what it spawned."""
        await server_idle(self.server, self.hub.requests)

    async def no_publish(self, *minions: RawMinion) -> None:
        """None of ``minions`` got a publish: checked once the master is idle (the in-memory hub
        hands a publish to its subscribers as it is sent, so there is nothing still on its way)."""
        await self.idle()
        for m in minions:
            assert m.client.publishes.empty(), f"{m.id} got a publish"


async def join_publishes(m: RawMinion, publish: Callable[[], Awaitable[str]], timeout: float = 10.0) -> None:
    """Prove ``m``'s SUB socket joined the master's PUB socket (ZeroMQ drops what is published
    before it did): publish probe jobs (``publish()`` gives the jid) until one reaches ``m``, then
    take the probes still on their way. The next publish ``m`` gets is one sent after this."""
    deadline = asyncio.get_running_loop().time() + timeout
    sent = [await publish()]
    while (pub := await m.next_pub(0.05)) is None:
        assert asyncio.get_running_loop().time() < deadline, f"{m.id} got no publish within {timeout} s"
        sent.append(await publish())
    while pub["jid"] != sent[-1]:
        assert pub["jid"] in sent, f"{m.id} got {pub['fun']} while joining"
        pub = await m.next_pub(timeout)
        assert pub is not None, f"the last probe never reached {m.id}"


async def unanswered(m: RawMinion, frame: bytes) -> bool:
    """Whether the master takes ``frame`` from ``m`` without answering it: a ping sent right
    behind it is answered (the master handles frames in order), and ``frame`` still has no reply."""
    sent = asyncio.ensure_future(m.send(frame, timeout=10))
    await asyncio.sleep(0)  # one loop turn: the task queues ``frame`` before the ping
    assert (await m.req("ping"))[0] == "rep"
    answered = sent.done()
    sent.cancel()
    await asyncio.gather(sent, return_exceptions=True)
    return not answered


def run_master(opts: dict[str, Any], body: Callable[[Ctx], Awaitable[None]], timeout: float = 30) -> None:
    async def main() -> None:
        hub = MemoryHub()
        async with running_master(opts, hub.server) as m:
            await asyncio.wait_for(body(Ctx(hub, m.server, m.keys, m.cache, opts, m.events)), timeout)
            assert not m.task.done(), "the receive loop stopped"

    asyncio.run(main())


# -- trust --------------------------------------------------------------------------


def test_pending_then_accepted_by_the_operator(master_opts):
    async def body(c: Ctx) -> None:
        m = c.minion("m1")
        assert (await m.auth())["status"] == "pending"
        assert await m.req("ping") == ("err", {"error": "unauthenticated"})
        assert (await m.auth())["status"] == "pending"
        c.keys.accept("m1")
        body = await m.auth()
        assert body["status"] == "accepted" and len(m.session) == 32
        kind, rep = await m.req("ping")
        assert kind == "rep" and rep["ok"] is True and isinstance(rep["time"], float)
        auths = [d for t, d in c.events if t == "salt/auth"]
        assert [a["act"] for a in auths] == ["pend", "pend", "accept"]
        assert auths[0]["id"] == "m1" and "BEGIN PUBLIC KEY" in auths[0]["pub"]

    run_master(master_opts, body)


def test_auto_accept_and_the_start_event_once_per_auth(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m = c.minion("m1")
        first = await m.auth()
        assert first["status"] == "accepted"
        assert c.keys.status("m1") == "accepted"
        await m.req("grains", grains={"os": "Debian"})
        await m.req("grains", grains={"os": "Debian"})
        assert c.tags().count("salt/minion/m1/start") == 1
        old = m.session
        second = await m.auth()  # every accepted auth makes a new session key
        assert second["status"] == "accepted" and m.session != old
        await m.req("grains", grains={"os": "Debian"})
        assert c.tags().count("salt/minion/m1/start") == 2
        # the old session key opens nothing any more: the sender is told to authenticate again
        stale = m.frame("ping", key=old)
        assert await m.send(stale) == ("err", {"error": NOT_OPENED})
        assert (await m.req("ping"))[0] == "rep"  # and the current session is untouched

    run_master(master_opts, body)


def test_rejected_and_denied_keys_get_no_session(master_opts):
    async def body(c: Ctx) -> None:
        bad = c.minion("bad", 1)
        assert (await bad.auth())["status"] == "pending"
        c.keys.reject("bad")
        assert (await bad.auth())["status"] == "rejected"
        assert await bad.req("ping") == ("err", {"error": "unauthenticated"})
        good = await c.accepted("good", 0)
        impostor = c.minion("good", 2)  # another key for an accepted id
        assert (await impostor.auth())["status"] == "denied"
        assert c.keys.status("good") == "accepted"
        assert (await good.req("ping"))[0] == "rep"  # the real minion is not cut off
        acts = [(d["id"], d["act"]) for t, d in c.events if t == "salt/auth"]
        assert ("bad", "reject") in acts and ("good", "denied") in acts

    run_master(master_opts, body)


def test_requests_need_a_session_and_a_valid_seal(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        stranger = c.minion("stranger", 1)
        assert await stranger.req("ping") == ("err", {"error": "unauthenticated"})
        m1 = await c.accepted("m1", 0)
        m2 = await c.accepted("m2", 1)
        # m2 speaks as m1 with its own session key: does not open, refused (to the sender only)
        forged = m2.frame("ret", key=m2.session, id_="m1", jid="20240101000000000001", **{"return": 1})
        assert await m1.send(forged) == ("err", {"error": NOT_OPENED})
        assert c.cache.flush(5) and c.cache.get_returns("20240101000000000001") == {}
        # a replayed request is refused
        frame = m1.frame("ping")
        assert (await m1.send(frame))[0] == "rep"
        assert await unanswered(m1, frame)
        # a stale one too
        proto = wire.Envelope("req", "m1", 1.0, crypto.new_nonce(), b"")
        body = crypto.seal(m1.session, proto.nonce, wire.pack({"cmd": "ping"}), proto.header())
        old = wire.Envelope("req", "m1", 1.0, proto.nonce, body).encode()
        assert await unanswered(m1, old)
        # unknown commands are answered with an error, sealed
        kind, rep = await m1.req("launch_missiles")
        assert kind == "rep" and "unknown request" in rep["error"]
        assert (await m1.req("ping"))[0] == "rep"

    run_master(master_opts, body)


def test_garbage_never_stops_the_loop(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m = await c.accepted("m1")
        valid = m.frame("ping")
        junk: list[Any] = [
            b"",
            os.urandom(1),
            os.urandom(64),
            os.urandom(4096),
            valid[:-5],
            valid[: len(valid) // 2],
            msgpack.packb([1, 2, 3]),
            msgpack.packb({"v": 1}),
            msgpack.packb({"v": 2, "k": "req"}),
            msgpack.packb({"v": 1, "k": "req", "id": "x" * 300, "t": 1.0, "n": b"0" * 12, "b": b""}),
            msgpack.packb({"v": 1, "k": "req", "id": "m1", "t": "now", "n": b"0" * 12, "b": b""}),
            msgpack.packb({"v": 1, "k": "auth", "id": "m1", "t": 1e300, "n": b"0" * 12, "b": b"\xc1"}),
            wire.clear("auth", "m1", {"pub": "not a key", "token": os.urandom(32)}).encode(),
            wire.clear("auth", "m1", {"pub": crypto.public_pem(rsa_key(0)), "token": b"short"}).encode(),
            wire.clear("auth", "../../etc", {"pub": crypto.public_pem(rsa_key(0)), "token": os.urandom(32)}).encode(),
            wire.clear("auth", "a\x00b", {"pub": crypto.public_pem(rsa_key(0)), "token": os.urandom(32)}).encode(),
            wire.clear("err", "m1", {"error": "x"}).encode(),
            wire.sealed("pub", "m1", m.session, {"fun": "x"}).encode(),
            wire.sealed("req", "m1", m.session, ["not", "a", "map"]).encode(),
            wire.sealed("req", "m1", m.session, {"cmd": "ret", "jid": "../../x", "return": 1}).encode(),
            wire.sealed("req", "m1", m.session, {"cmd": "grains", "grains": [1]}).encode(),
            wire.sealed("req", "m1", m.session, {"cmd": "event", "tag": 5}).encode(),
        ]
        for frame in junk:
            await c.hub.requests.put((m.client.peer, b"\0" * 8, frame))
        await c.idle()  # auth tasks run in workers
        assert (await m.req("ping"))[0] == "rep"
        assert not os.path.exists(os.path.join(c.keys.pki_dir, "etc"))
        assert sorted(c.keys.list_keys()["minions"]) == ["m1"]  # no junk id was stored

    run_master(master_opts, body)


def test_deleting_a_key_drops_the_session_at_once(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        m2 = await c.accepted("m2", 1)
        KeyStore(c.opts).delete("m1")  # the operator (briny-key, another process)
        await c.server.check_keys()  # the housekeeping's read of the key folders
        assert "m1" not in c.server.sessions and "m2" in c.server.sessions
        assert await m1.req("ping") == ("err", {"error": "unauthenticated"})
        assert c.server.grains.get("m1") is None  # no key left: its grains are forgotten
        res = await c.server.publisher.publish("*", "glob", "test.ping")
        assert res["minions"] == ["m2"]
        assert (await m2.next_pub())["fun"] == "test.ping"
        await c.no_publish(m1)
        # rejecting it: the key is still known, the grains stay
        KeyStore(c.opts, fire_events=False).reject("m2", include_accepted=True)
        await c.server.check_keys()
        assert await m2.req("ping") == ("err", {"error": "unauthenticated"})
        assert c.server.grains.get("m2") == {"id": "m2"}

    run_master(master_opts, body)


def test_the_housekeeping_notices_a_key_removed_by_hand(master_opts):
    """The key folders are the one source: a key moved by hand (no briny-key, no event) drops
    the session within the housekeeping's interval."""
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        keeper = asyncio.ensure_future(c.server.housekeeping(interval=0.02))
        try:
            pki = c.keys.pki_dir
            os.replace(os.path.join(pki, "minions", "m1"), os.path.join(pki, "minions_rejected", "m1"))
            deadline = asyncio.get_running_loop().time() + 5
            while "m1" in c.server.sessions and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.01)
            assert "m1" not in c.server.sessions
            assert await m1.req("ping") == ("err", {"error": "unauthenticated"})
        finally:
            keeper.cancel()
            await asyncio.gather(keeper, return_exceptions=True)

    run_master(master_opts, body)


def test_a_rejected_key_is_noticed_when_publishing(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        KeyStore(c.opts, fire_events=False).reject("m1", include_accepted=True)
        res = await c.server.publisher.publish("*", "glob", "test.ping")
        assert res == {"jid": "", "minions": []}
        assert "m1" not in c.server.sessions
        await c.no_publish(m1)

    run_master(master_opts, body)


# -- jobs ---------------------------------------------------------------------------


def test_publishes_reach_only_targeted_minions_and_are_signed(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        web1 = await c.accepted("web1", 0, {"os": "Debian", "roles": ["web"]})
        web2 = await c.accepted("web2", 1, {"os": "RedHat", "roles": ["web"]})
        db1 = await c.accepted("db1", 2, {"os": "Debian", "roles": ["db"]})
        res = await c.server.publisher.publish("web*", "glob", "test.arg", [1, "two"], {"k": "v"}, 7, "alice")
        assert res["minions"] == ["web1", "web2"]
        for m in (web1, web2):
            pub = await m.next_pub()
            assert pub == {
                "jid": res["jid"],
                "fun": "test.arg",
                "arg": [1, "two"],
                "kwarg": {"k": "v"},
                "tgt": "web*",
                "tgt_type": "glob",
                "user": "alice",
                "timeout": 7.0,
            }
        await c.no_publish(db1)
        new = [d for t, d in c.events if t == f"salt/job/{res['jid']}/new"]
        assert new and new[0]["minions"] == ["web1", "web2"] and new[0]["fun"] == "test.arg"
        c.cache.flush()
        assert c.cache.get_minions(res["jid"]) == ["web1", "web2"]
        assert c.cache.get_load(res["jid"])["fun"] == "test.arg"

        publish = c.server.publisher.publish
        assert (await publish("os:Debian", "grain", "test.ping"))["minions"] == ["db1", "web1"]
        assert (await publish("G@roles:web and not E@web2", "compound", "test.ping"))["minions"] == ["web1"]
        assert (await publish("db1,web2,nope", "list", "test.ping"))["minions"] == ["db1", "web2"]
        assert (await publish("^db", "pcre", "test.ping"))["minions"] == ["db1"]
        assert "error" in await publish("G@os:x and", "compound", "test.ping")
        assert "error" in await publish("x", "nosuch", "test.ping")

        # a publish signed by anyone but the master is refused by the minion
        env = wire.sealed("pub", "db1", db1.session, {"jid": "1", "fun": "cmd.run"})
        forged = wire.sign(env, Ed25519PrivateKey.generate())
        with pytest.raises(AuthError):
            wire.verify(forged, db1.sign_pub)

    run_master(master_opts, body)


def test_returns_reach_the_job_cache_and_fire_events(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        m2 = await c.accepted("m2", 1)
        res = await c.server.publisher.publish("m1", "glob", "test.ping")
        jid = res["jid"]
        pub = await m1.next_pub()
        kind, rep = await m1.req(
            "ret", jid=jid, fun=pub["fun"], fun_args=[], retcode=0, success=True, **{"return": True}
        )
        assert (kind, rep) == ("rep", {"ok": True})
        # m2 was not targeted: its return for this job is refused
        kind, rep = await m2.req("ret", jid=jid, fun="test.ping", fun_args=[], **{"return": "forged"})
        assert kind == "rep" and "not sent" in rep["error"]
        c.cache.flush()
        assert c.cache.get_returns(jid) == {"m1": {"return": True, "retcode": 0, "success": True}}
        ev = [d for t, d in c.events if t == f"salt/job/{jid}/ret/m1"]
        assert ev and ev[0]["return"] is True and ev[0]["id"] == "m1" and ev[0]["fun"] == "test.ping"
        assert not [t for t in c.tags() if t.endswith("/ret/m2")]

    run_master(master_opts, body)


def test_forwarded_events_are_bound_to_the_sender(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        jid = (await c.server.publisher.publish("m1", "glob", "test.ping"))["jid"]  # a job sent to m1
        for tag in (f"salt/state_result/{jid}/m2/pkg", f"salt/job/{jid}/ret/m2", "custom/thing"):
            assert (await m1.req("event", tag=tag, data={"id": "m2", "x": 1}))[0] == "rep"
        kind, rep = await m1.req("event", tag="salt/key", data={"act": "accept", "id": "evil"})
        assert "error" in rep
        fired = {t: d for t, d in c.events}
        assert fired[f"salt/state_result/{jid}/m1/pkg"]["id"] == "m1"
        assert fired[f"salt/job/{jid}/ret/m1"]["id"] == "m1"
        # Salt's wrapper: the sender's id beside what it sent, which is fired as sent
        assert fired["custom/thing"]["id"] == "m1" and fired["custom/thing"]["data"] == {"id": "m2", "x": 1}
        assert fired[f"salt/state_result/{jid}/m1/pkg"]["data"] == {"id": "m2", "x": 1}
        assert "salt/key" not in fired
        assert not [t for t in fired if "/m2" in t]

    run_master(master_opts, body)


def test_check_event_tag():
    assert check_event_tag("salt/state_result/1/m2/x/y", "m1") == "salt/state_result/1/m1/x/y"
    assert check_event_tag("salt/job/1/ret/m2", "m1") == "salt/job/1/ret/m1"
    assert check_event_tag("salt/minion/m2/start", "m1") == "salt/minion/m1/start"
    assert check_event_tag("salt/job/1/new", "m1") == "salt/job/1/new"
    assert check_event_tag("my/tag", "m1") == "my/tag"


def test_find_job_and_minions(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        m2 = await c.accepted("m2", 1)
        res = await c.server.publisher.publish("*", "glob", "test.sleep", [10])
        await m1.next_pub()
        await m2.next_pub()
        fj = await c.server.publisher.find_job(res["jid"], ["m2"])
        assert fj["minions"] == ["m2"] and fj["jid"] != res["jid"]
        pub = await m2.next_pub()
        assert pub["fun"] == "saltutil.find_job" and pub["arg"] == [res["jid"]]
        await c.no_publish(m1)
        await m2.req(
            "ret",
            jid=fj["jid"],
            fun="saltutil.find_job",
            fun_args=[res["jid"]],
            **{"return": {"jid": res["jid"], "fun": "test.sleep"}},
        )
        c.cache.flush()
        assert c.cache.get_load(fj["jid"]) == {}  # probes are events only
        assert any(t == f"salt/job/{fj['jid']}/ret/m2" for t in c.tags())
        assert "error" in await c.server.publisher.find_job("nope", ["m2"])
        assert "error" in await c.server.publisher.find_job(res["jid"], ["../x"])
        assert await c.server.minions() == {"accepted": ["m1", "m2"], "connected": ["m1", "m2"]}

    run_master(master_opts, body)


def test_a_job_waits_for_a_minion_that_reauthenticates(master_opts):
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        c.server.drop_session("m1", "test: as after a master restart")
        res = await c.server.publisher.publish("m1", "glob", "test.ping")
        assert res["minions"] == ["m1"]
        await c.no_publish(m1)
        await m1.auth()
        await m1.req("ping")
        assert (await m1.next_pub())["jid"] == res["jid"]

    run_master(master_opts, body)


def test_grains_survive_a_master_restart(master_opts):
    master_opts["auto_accept"] = True

    async def first(c: Ctx) -> None:
        await c.accepted("m1", 0, {"os": "Debian"})
        await c.accepted("m2", 1, {"os": "Arch"})  # written to disk by the time the master is closed

    async def second(c: Ctx) -> None:
        assert (await c.server.publisher.publish("os:Debian", "grain", "test.ping"))["minions"] == ["m1"]

    run_master(master_opts, first)
    run_master(master_opts, second)


def test_the_operator_is_answered_while_every_worker_is_busy(master_opts):
    """An auth storm fills the worker pool; ``minions`` and a publish's targeting run in the
    operator's own threads and are answered at once."""
    master_opts["auto_accept"] = True

    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        release = threading.Event()
        workers = c.server.executor._max_workers  # type: ignore[attr-defined]
        loop = asyncio.get_running_loop()
        busy = [loop.run_in_executor(c.server.executor, release.wait, 20) for _ in range(workers + 4)]
        try:
            state = await asyncio.wait_for(c.server.minions(), 5)
            assert state["accepted"] == ["m1"]
            res = await asyncio.wait_for(c.server.publisher.publish("m1", "glob", "test.ping"), 5)
            assert res["minions"] == ["m1"]
            assert (await m1.next_pub())["jid"] == res["jid"]
            assert not any(f.done() for f in busy)  # the workers were busy all along
        finally:
            release.set()
            await asyncio.gather(*busy)

    run_master(master_opts, body)


def test_a_flood_of_frames_never_starves_the_loops_other_tasks(master_opts):
    """Frames already waiting are handed over without a pause: the receive loop must still let
    the other tasks (the operator's IPC, spawned replies) run while a flood is being handled."""

    async def body(c: Ctx) -> None:
        await c.idle()
        flood = 20 * SERVE_TURN
        for _ in range(flood):
            c.hub.requests.put_nowait((b"peer", b"corr", b"not an envelope"))
        await asyncio.sleep(0)  # the receive loop takes over
        left = c.hub.requests.qsize()
        assert 0 < left < flood, left  # this task ran again while the flood was still queued
        await c.idle()

    run_master(master_opts, body)
