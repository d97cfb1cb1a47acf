"""The wire envelope and the crypto under it: sealing, binding, replay, garbage."""

from __future__ import annotations

import os
import random

import msgpack
import pytest

from briny.common import crypto, wire
from briny.common.exceptions import AuthError, WireError


def test_sealed_roundtrip_and_binding():
    key = crypto.new_session_key()
    env = wire.sealed("req", "web1", key, {"cmd": "ret", "jid": "1", "return": {"a": {1, 2}}})
    back = wire.decode(env.encode())
    assert back == env
    assert wire.open_sealed(back, key) == {"cmd": "ret", "jid": "1", "return": {"a": [1, 2]}}
    # the body is bound to the header: another id, kind or time does not open
    for forged in (
        wire.Envelope("req", "web2", env.ts, env.nonce, env.body),
        wire.Envelope("rep", "web1", env.ts, env.nonce, env.body),
        wire.Envelope("req", "web1", env.ts + 1, env.nonce, env.body),
    ):
        with pytest.raises(AuthError):
            wire.open_sealed(forged, key)
    with pytest.raises(AuthError):
        wire.open_sealed(env, crypto.new_session_key())


def test_replay_guard_refuses_repeats_and_stale_messages():
    guard = wire.ReplayGuard(window=60)
    env = wire.sealed("req", "m", crypto.new_session_key(), {})
    guard.check(env)
    with pytest.raises(AuthError, match="replayed"):
        guard.check(env)
    old = wire.Envelope("req", "m", env.ts - 120, crypto.new_nonce(), env.body)
    with pytest.raises(AuthError, match="stale"):
        guard.check(old)
    # nonces older than the window are forgotten; memory stays bounded
    guard.check(wire.Envelope("req", "m", env.ts + 1000, crypto.new_nonce(), b""), now=env.ts + 1000)
    assert len(guard._seen) == 1


def test_publish_signatures():
    from cryptography.hazmat.primitives.asymmetric import ed25519

    signer = ed25519.Ed25519PrivateKey.generate()
    env = wire.sign(wire.sealed("pub", "m", crypto.new_session_key(), {"fun": "test.ping"}), signer)
    wire.verify(wire.decode(env.encode()), crypto.ed_public_bytes(signer))
    other = ed25519.Ed25519PrivateKey.generate()
    with pytest.raises(AuthError):
        wire.verify(env, crypto.ed_public_bytes(other))
    unsigned = wire.sealed("pub", "m", crypto.new_session_key(), {})
    with pytest.raises(AuthError):
        wire.verify(unsigned, crypto.ed_public_bytes(signer))


@pytest.mark.parametrize(
    "frame",
    [
        b"",
        b"\x00",
        b"\xc1",
        os.urandom(64),
        msgpack.packb([1, 2, 3]),
        msgpack.packb({"v": 2}),
        msgpack.packb({"v": wire.VERSION, "k": "nope", "id": "m", "t": 1.0, "n": b"x" * 12, "b": b""}),
        msgpack.packb({"v": wire.VERSION, "k": "req", "id": "", "t": 1.0, "n": b"x" * 12, "b": b""}),
        msgpack.packb({"v": wire.VERSION, "k": "req", "id": "m", "t": "now", "n": b"x" * 12, "b": b""}),
        msgpack.packb({"v": wire.VERSION, "k": "req", "id": "m", "t": 1.0, "n": b"short", "b": b""}),
        msgpack.packb({"v": wire.VERSION, "k": "req", "id": "m", "t": 1.0, "n": b"x" * 12, "b": "text"}),
        b"\x91" * 5000,  # deeply nested arrays
        # a well-formed frame of protocol 1 (auth without proof of possession)
        msgpack.packb({"v": 1, "k": "auth", "id": "m", "t": 1.0, "n": b"x" * 12, "b": msgpack.packb({})}),
    ],
)
def test_garbage_frames_raise_wire_errors(frame):
    with pytest.raises(WireError):
        wire.decode(frame)


def test_random_frames_never_raise_anything_else():
    rng = random.Random(7)
    good = wire.sealed("req", "m", crypto.new_session_key(), {"x": 1}).encode()
    for _ in range(2000):
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            wire.decode(bytes(data[: rng.randint(0, len(data))]))
        except WireError:
            pass


def test_rsa_identity_and_fingerprint(tmp_path):
    priv = crypto.load_or_create_rsa(tmp_path / "k" / "minion.pem", tmp_path / "k" / "minion.pub")
    assert oct((tmp_path / "k" / "minion.pem").stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "k").stat().st_mode & 0o777) == "0o700"
    again = crypto.load_or_create_rsa(tmp_path / "k" / "minion.pem", tmp_path / "k" / "minion.pub")
    pem = crypto.public_pem(priv)
    assert crypto.public_pem(again) == pem
    secret = crypto.new_session_key()
    assert crypto.rsa_decrypt(priv, crypto.rsa_encrypt(crypto.load_public(pem), secret)) == secret
    fp = crypto.fingerprint(pem)
    assert len(fp.split(":")) == 32
    sig = crypto.rsa_sign(priv, b"data")
    assert crypto.rsa_verify(crypto.load_public(pem), sig, b"data")
    assert not crypto.rsa_verify(crypto.load_public(pem), sig, b"other")
    with pytest.raises(AuthError):
        crypto.load_public("not a key")
