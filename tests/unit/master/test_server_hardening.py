"""Attacks on the master from issue 11 (findings 6 to 9), each refused while a real minion keeps
answering: decoding bombs and floods before auth, returns for jobs the master did not send,
hidden minion ids, return events and tags that dodge the master-only filter.

The memory these attacks cost a real master is measured by ``bench/bombs.py``, not here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
import msgpack
import pytest

from briny.common import crypto, wire
from briny.common.exceptions import AuthError
from briny.common.ids import valid_jid
from briny.master import server as server_mod

from .test_server import Ctx, rsa_key, run_master

BOMB = 1024 * 1024  # empty maps: one byte each on the wire, ~64 bytes each once built


def bomb_body(items: int = BOMB) -> bytes:
    return b"\xdd" + items.to_bytes(4, "big") + b"\x80" * items


def raw_auth(minion_id: str, body: bytes) -> bytes:
    return wire.Envelope("auth", minion_id, time.time(), crypto.new_nonce(), body).encode()


def with_auto_accept(opts: dict[str, Any], body: Callable[[Ctx], Awaitable[None]]) -> None:
    """Run ``body`` against a master that accepts every new key (the attacks need no operator)."""
    run_master({**opts, "auto_accept": True}, body)


def key_files(c: Ctx) -> dict[str, list[str]]:
    """Every file in the key folders, hidden ones included."""
    pki = Path(c.keys.pki_dir)
    return {
        folder: sorted(os.listdir(pki / folder))
        for folder in ("minions", "minions_pre", "minions_rejected", "minions_denied")
        if (pki / folder).is_dir()
    }


# -- finding 6: memory amplification before auth ---------------------------------------------


def test_decoding_bombs_before_auth_are_refused_unbuilt(master_opts):
    async def body(c: Ctx) -> None:
        m = await c.accepted("m1")
        before = key_files(c)
        pub = crypto.public_pem(rsa_key(1))
        frames = [
            bomb_body(),  # the frame itself
            raw_auth("bomb1", bomb_body()),  # an auth body of empty maps
            raw_auth(
                "bomb2", wire.pack({"pub": pub, "token": os.urandom(32), "pad": b"x" * wire.MAX_CLEAR_FRAME})
            ),  # over the clear limit
            raw_auth("bomb3", wire.pack({"pub": pub, "token": os.urandom(32), "x": [{}] * 100})),
            raw_auth("bomb4", wire.pack({"pub": pub, "token": os.urandom(32), "x": {"a": {}}})),
            msgpack.packb(
                {"v": 1, "k": "auth", "id": "bomb5", "t": time.time(), "n": b"0" * 12, "b": b"", "x": [{}] * 1000}
            ),  # a container in the envelope
        ]
        for frame in frames:
            await c.hub.requests.put((m.client.peer, b"\0" * 8, frame))
        await c.idle()
        assert (await m.req("ping"))[0] == "rep"
        assert key_files(c) == before  # no bomb id got a key file
        assert not [d for t, d in c.events if t == "salt/auth" and d["id"].startswith("bomb")]

    with_auto_accept(master_opts, body)


def test_the_envelope_and_clear_payloads_are_flat():
    with pytest.raises(wire.WireError, match="not an envelope"):
        wire.decode(bomb_body())
    env = wire.Envelope("auth", "m", time.time(), crypto.new_nonce(), bomb_body())
    with pytest.raises(wire.WireError, match="payload of"):
        wire.clear_payload(wire.decode(env.encode()))
    nested = wire.Envelope("auth", "m", time.time(), crypto.new_nonce(), wire.pack({"pub": {"a": 1}}))
    with pytest.raises(wire.WireError, match="not a scalar|max_map_len"):
        wire.clear_payload(nested)
    many = wire.Envelope(
        "auth", "m", time.time(), crypto.new_nonce(), wire.pack({f"f{i}": i for i in range(wire.MAX_FIELDS + 1)})
    )
    with pytest.raises(wire.WireError, match="fields"):
        wire.clear_payload(many)
    ok = wire.clear("auth", "m", {"pub": "PEM", "token": b"t" * 32, "n": None, "f": 1.5, "b": True})
    assert wire.clear_payload(wire.decode(ok.encode())) == {
        "pub": "PEM",
        "token": b"t" * 32,
        "n": None,
        "f": 1.5,
        "b": True,
    }
    assert wire.frame_limit("auth") == wire.frame_limit("err") == wire.MAX_CLEAR_FRAME
    assert wire.frame_limit("req") == wire.frame_limit("pub") == wire.MAX_FRAME
    # sealed bodies keep their structure, within the body limits
    small = wire.Limits(10, 10, 3, 3)
    assert wire.unpack(wire.pack({"a": [1, 2, 3]}), small) == {"a": [1, 2, 3]}
    for too_big in ({"a": [1, 2, 3, 4]}, {"a": "x" * 11}, {str(i): i for i in range(4)}):
        with pytest.raises(wire.WireError):
            wire.unpack(wire.pack(too_big), small)


def test_an_auth_flood_is_bounded_and_the_minions_keep_answering(master_opts, monkeypatch):
    monkeypatch.setattr(server_mod, "AUTH_BACKLOG_BYTES", 64 * 1024)  # room for ~10 waiting auths

    async def body(c: Ctx) -> None:
        m = await c.accepted("m1")
        backlog = c.server._auth_backlog
        frames = []
        for i in range(200):  # signed auths with real challenges: what reaches the workers
            flooder = c.minion(f"flood{i}", 1)
            token = os.urandom(32)
            offer = await flooder.challenge(token)
            frames.append(
                wire.clear(
                    "auth",
                    flooder.id,
                    {"pub": "x" * 4000, "token": token, "challenge": offer.challenge, "sig": b"s" * 256},
                ).encode()
            )
        for frame in frames:
            await c.hub.requests.put((m.client.peer, os.urandom(8), frame))
        assert (await m.req("ping"))[0] == "rep"  # answered while the flood waits
        await c.idle()
        assert backlog.dropped > 0 and backlog.used == 0 and backlog.waiting == 0
        assert (await m.req("ping"))[0] == "rep"
        again = c.minion("m2", 1)  # a real auth once the flood is gone
        assert (await again.auth())["status"] == "accepted"
        assert sorted(c.keys.list_keys()["minions"]) == ["m1", "m2"]

    with_auto_accept(master_opts, body)


def test_backlog_admits_within_its_budget():
    backlog = server_mod.Backlog(3 * (100 + server_mod.TASK_OVERHEAD), "frames")
    assert [backlog.admit(100) for _ in range(4)] == [True, True, True, False]
    assert (backlog.waiting, backlog.dropped) == (3, 1)
    backlog.release(100)
    assert backlog.admit(100) and not backlog.admit(100)
    for _ in range(3):
        backlog.release(100)
    assert backlog.used == 0 and backlog.waiting == 0


# -- finding 7: returns the master did not ask for --------------------------------------------


def test_returns_are_checked_against_the_job_cache_after_a_restart(master_opts):
    jids: dict[str, str] = {}

    async def first(c: Ctx) -> None:
        await c.accepted("m1", 0)
        await c.accepted("m2", 1)
        jids["m1"] = (await c.server.publisher.publish("m1", "glob", "test.ping"))["jid"]

    async def second(c: Ctx) -> None:  # a new master: nothing of the job in memory
        m1 = await c.accepted("m1", 0)
        m2 = await c.accepted("m2", 1)
        jid = jids["m1"]
        assert jid not in c.server.jobs
        kind, rep = await m2.req("ret", jid=jid, fun="test.ping", fun_args=[], **{"return": "forged"})
        assert kind == "rep" and rep == {"error": f"job {jid} was not sent to m2"}
        never = "20200101000000000001"
        kind, rep = await m2.req("ret", jid=never, fun="test.ping", fun_args=[], **{"return": "made up"})
        assert kind == "rep" and "not a job of this master" in rep["error"]
        kind, rep = await m1.req("ret", jid=jid, fun="test.ping", fun_args=[], **{"return": True})
        assert (kind, rep) == ("rep", {"ok": True})
        c.cache.flush()
        assert c.cache.get_returns(jid) == {"m1": {"return": True}}
        assert c.cache.get_load(never) == {} and c.cache.get_returns(never) == {}
        assert [t for t in c.tags() if "/ret/" in t] == [f"salt/job/{jid}/ret/m1"]
        # the same once a job's memory expired (JOB_MEMORY) on a running master
        fresh = (await c.server.publisher.publish("m1", "glob", "test.ping"))["jid"]
        c.cache.flush()
        c.server.jobs.clear()
        assert "not sent to m2" in (await m2.req("ret", jid=fresh, fun="x", **{"return": 1}))[1]["error"]
        assert (await m1.req("ret", jid=fresh, fun="x", **{"return": 1}))[1] == {"ok": True}

    with_auto_accept(master_opts, first)
    with_auto_accept(master_opts, second)


def test_a_minions_own_call_gets_a_job_of_its_own(master_opts):
    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        local = "20240101000000000007"
        ret = {"fun": "test.arg", "fun_args": [1, {"k": "v"}], "retcode": 0, "success": True, "return": {"args": [1]}}
        kind, rep = await m1.req("ret", jid="req", local_jid=local, **ret)
        assert kind == "rep" and rep["ok"] is True and valid_jid(rep["jid"]) and rep["jid"] != local
        jid = rep["jid"]
        # sent again (no reply reached the minion): the same job, not a second one
        assert (await m1.req("ret", jid="req", local_jid=local, **ret))[1] == {"ok": True, "jid": jid}
        c.cache.flush()
        load = c.cache.get_load(jid)
        assert load["fun"] == "test.arg" and load["tgt"] == "m1" and load["Minions"] == ["m1"]
        assert load["arg"] == [1, {"k": "v"}] and load["local_jid"] == local
        assert c.cache.get_returns(jid) == {"m1": {"return": {"args": [1]}, "retcode": 0, "success": True}}
        assert [j.jid for j in c.cache.list_jobs()] == [jid]
        assert c.tags().count(f"salt/job/{jid}/ret/m1") == 1
        # the job is m1's alone
        m2 = await c.accepted("m2", 1)
        assert "not sent to m2" in (await m2.req("ret", jid=jid, fun="x", **{"return": 1}))[1]["error"]
        for bad in ({"local_jid": "../x"}, {"fun": 5}):
            kind, rep = await m1.req("ret", jid="req", **{**ret, **bad})
            assert kind == "rep" and "error" in rep

    with_auto_accept(master_opts, body)


# -- finding 8: hidden keys --------------------------------------------------------------------


@pytest.mark.parametrize("hidden", [".hidden", ".", "..", ".m1"])
def test_an_id_starting_with_a_dot_gets_no_key(master_opts, hidden):
    async def body(c: Ctx) -> None:
        m = await c.accepted("m1")
        before = key_files(c)
        sneaky = c.minion(hidden, 1)
        with pytest.raises(AuthError, match="bad minion id"):
            await sneaky.challenge(os.urandom(32))  # the hello is refused with an err
        await c.idle()
        assert (
            key_files(c)
            == before
            == {"minions": ["m1"], "minions_pre": [], "minions_rejected": [], "minions_denied": []}
        )
        assert not [d for t, d in c.events if t == "salt/auth" and d["id"] == hidden]
        assert (await m.req("ping"))[0] == "rep"

    with_auto_accept(master_opts, body)


# -- finding 9: return events and tags ---------------------------------------------------------


def test_a_return_event_needs_a_job_sent_to_the_sender(master_opts):
    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1", 0)
        m2 = await c.accepted("m2", 1)
        jid = (await c.server.publisher.publish("m1", "glob", "test.ping"))["jid"]
        for tag in (
            f"salt/job/{jid}/ret/m2",
            f"salt/job/{jid}/ret",
            "salt/job/nojid/ret/m2",
            "salt/job/20200101000000000001/ret/m2",
        ):
            kind, rep = await m2.req("event", tag=tag, data={"return": "forged"})
            assert kind == "rep" and "a return event for a job not sent to m2" in rep["error"], tag
        for tag in (f"salt//job/{jid}/ret/m2/", f" salt/job/{jid}/ret/m2", f"salt/job/{jid}/RET/m2"):
            kind, rep = await m2.req("event", tag=tag, data={"return": "forged"})
            assert kind == "rep" and "must be written" in rep["error"], tag
        assert (await m1.req("event", tag=f"salt/job/{jid}/ret/m1", data={"return": True}))[1] == {"ok": True}
        fired = [(t, d["id"], d["data"]) for t, d in c.events if "/ret/" in t]
        assert fired == [(f"salt/job/{jid}/ret/m1", "m1", {"return": True})]

    with_auto_accept(master_opts, body)


@pytest.mark.parametrize(
    "tag",
    [
        " salt/key",
        "salt//key",
        "salt/key/",
        "SALT/Key",
        "salt/auth ",
        "\tsalt/auth",
        "salt/ key",
        "salt/job/20240101000000000001/new/",
        "salt/job/20240101000000000001//new",
        "salt/job/20240101000000000001/NEW",
        "salt/run/20240101000000000001/new",
        "salt/wheel/x",
        "salt/event/dropped",
        "Salt/Reactor/ret",
        "",
        " / ",
        "tag\x00with nul",
        "x" * 1025,
        5,
    ],
)
def test_master_only_tags_are_refused_however_written(master_opts, tag):
    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1")
        kind, rep = await m1.req("event", tag=tag, data={"act": "accept", "id": "evil"})
        assert kind == "rep" and "error" in rep
        assert [t for t, _ in c.events if t not in ("salt/auth", "minion_start", "salt/minion/m1/start")] == []
        assert (await m1.req("ping"))[0] == "rep"

    with_auto_accept(master_opts, body)


def test_salt_tags_keep_their_fixed_part_exact_and_the_rest_as_sent(master_opts):
    async def body(c: Ctx) -> None:
        m1 = await c.accepted("m1")
        jid = (await c.server.publisher.publish("m1", "glob", "test.ping"))["jid"]
        fired_as = {
            " myapp//deploy/done/ ": " myapp//deploy/done/ ",  # not salt/: as Salt, untouched
            "salt/minion/m2//ping": "salt/minion/m1//ping",  # bound; the free part kept
            f"salt/state_result/{jid}/m1//etc/motd": f"salt/state_result/{jid}/m1//etc/motd",  # a file state
            "salt/keyboard": "salt/keyboard",
            "salt/job/new": "salt/job/new",
        }
        for tag in fired_as:
            assert (await m1.req("event", tag=tag, data={"x": 1}))[1] == {"ok": True}, tag
        for tag in (
            "salt/Minion/m1/x",
            "salt/minion/ m1/x",
            f"salt//state_result/{jid}/m1/x",
            f"salt/state_result/{jid}//m1/x",
        ):
            kind, rep = await m1.req("event", tag=tag, data={"x": 1})
            assert kind == "rep" and "must be written" in rep["error"], tag
        master_own = (
            "salt/auth",
            "minion_start",
            "salt/minion/m1/start",
            jid,
            f"salt/job/{jid}/new",
            f"salt/job/{jid}/publish",
        )
        fired = {t: d for t, d in c.events if t not in master_own}
        assert set(fired) == set(fired_as.values())
        assert fired["salt/minion/m1//ping"]["id"] == "m1" and fired["salt/minion/m1//ping"]["data"] == {"x": 1}
        assert fired[" myapp//deploy/done/ "]["data"] == {"x": 1}

    with_auto_accept(master_opts, body)
