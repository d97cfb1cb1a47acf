"""Attacks on the master from issue 11, each refused while a real minion keeps answering:
decoding bombs and floods before auth.

The memory these attacks cost a real master is measured by ``bench/bombs.py``, not here.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
import msgpack
import pytest

from briny.common import crypto, wire
from briny.master import server as server_mod

from .test_server import Ctx, rsa_key, run_master

BOMB = 1024 * 1024   # empty maps: one byte each on the wire, ~64 bytes each once built


def bomb_body(items: int = BOMB) -> bytes:
    return b"\xdd" + items.to_bytes(4, "big") + b"\x80" * items


def raw_auth(minion_id: str, body: bytes) -> bytes:
    return wire.Envelope("auth", minion_id, time.time(), crypto.new_nonce(), body).encode()


async def settle(c: Ctx, seconds: float = 10.0) -> None:
    """Wait (bounded) until the master took every queued frame and finished its auth tasks."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if c.hub.requests.empty() and not [t for t in c.server._tasks if not t.done()]:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the master did not work through the frames in time")


def with_auto_accept(opts: dict[str, Any], body: Callable[[Ctx], Awaitable[None]]) -> None:
    """Run ``body`` against a master that accepts every new key (the attacks need no operator)."""
    run_master({**opts, "auto_accept": True}, body)


def key_files(c: Ctx) -> dict[str, list[str]]:
    """Every file in the key folders, hidden ones included."""
    pki = Path(c.keys.pki_dir)
    return {folder: sorted(os.listdir(pki / folder)) for folder in
            ("minions", "minions_pre", "minions_rejected", "minions_denied") if (pki / folder).is_dir()}


# -- finding 6: memory amplification before auth ---------------------------------------------

def test_decoding_bombs_before_auth_are_refused_unbuilt(master_opts):
    async def body(c: Ctx) -> None:
        m = await c.accepted("m1")
        before = key_files(c)
        pub = crypto.public_pem(rsa_key(1))
        frames = [
            bomb_body(),                                                  # the frame itself
            raw_auth("bomb1", bomb_body()),                               # an auth body of empty maps
            raw_auth("bomb2", wire.pack({"pub": pub, "token": os.urandom(32),
                                         "pad": b"x" * wire.MAX_CLEAR_FRAME})),   # over the clear limit
            raw_auth("bomb3", wire.pack({"pub": pub, "token": os.urandom(32), "x": [{}] * 100})),
            raw_auth("bomb4", wire.pack({"pub": pub, "token": os.urandom(32), "x": {"a": {}}})),
            msgpack.packb({"v": 1, "k": "auth", "id": "bomb5", "t": time.time(), "n": b"0" * 12,
                           "b": b"", "x": [{}] * 1000}),                   # a container in the envelope
        ]
        for frame in frames:
            await c.hub.requests.put((m.client.peer, b"\0" * 8, frame))
        await settle(c)
        assert (await m.req("ping"))[0] == "rep"
        assert key_files(c) == before                      # no bomb id got a key file
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
    many = wire.Envelope("auth", "m", time.time(), crypto.new_nonce(),
                         wire.pack({f"f{i}": i for i in range(wire.MAX_FIELDS + 1)}))
    with pytest.raises(wire.WireError, match="fields"):
        wire.clear_payload(many)
    ok = wire.clear("auth", "m", {"pub": "PEM", "token": b"t" * 32, "n": None, "f": 1.5, "b": True})
    assert wire.clear_payload(wire.decode(ok.encode())) == {"pub": "PEM", "token": b"t" * 32, "n": None,
                                                             "f": 1.5, "b": True}
    assert wire.frame_limit("auth") == wire.frame_limit("err") == wire.MAX_CLEAR_FRAME
    assert wire.frame_limit("req") == wire.frame_limit("pub") == wire.MAX_FRAME
    # sealed bodies keep their structure, within the body limits
    small = wire.Limits(10, 10, 3, 3)
    assert wire.unpack(wire.pack({"a": [1, 2, 3]}), small) == {"a": [1, 2, 3]}
    for too_big in ({"a": [1, 2, 3, 4]}, {"a": "x" * 11}, {str(i): i for i in range(4)}):
        with pytest.raises(wire.WireError):
            wire.unpack(wire.pack(too_big), small)


def test_an_auth_flood_is_bounded_and_the_minions_keep_answering(master_opts, monkeypatch):
    monkeypatch.setattr(server_mod, "AUTH_BACKLOG_BYTES", 64 * 1024)   # room for ~10 waiting auths
    async def body(c: Ctx) -> None:
        m = await c.accepted("m1")
        backlog = c.server._auth_backlog
        junk = wire.pack({"pub": "x" * 4000, "token": os.urandom(32)})
        for i in range(200):
            await c.hub.requests.put((m.client.peer, os.urandom(8), raw_auth(f"flood{i}", junk)))
        assert (await m.req("ping"))[0] == "rep"           # answered while the flood waits
        await settle(c)
        assert backlog.dropped > 0 and backlog.used == 0 and backlog.waiting == 0
        assert (await m.req("ping"))[0] == "rep"
        again = c.minion("m2", 1)                          # a real auth once the flood is gone
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
