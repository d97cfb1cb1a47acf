"""The auth handshake messages (common/handshake.py): both halves, and every field bound."""

from __future__ import annotations

import os

import pytest

from briny.common import crypto, handshake, wire
from briny.common.exceptions import AuthError, WireError

_KEYS: dict[str, crypto.RSAPrivate] = {}


def key(name: str) -> crypto.RSAPrivate:
    if name not in _KEYS:
        _KEYS[name] = crypto.generate_rsa()
    return _KEYS[name]


def master_pub() -> str:
    return crypto.public_pem(key("master"))


def signed_auth(
    minion: str = "m1", *, signer: str = "minion", finger: str | None = None, challenge: bytes | None = None
) -> tuple[handshake.AuthRequest, bytes, bytes]:
    token, nonce = os.urandom(32), challenge or os.urandom(32)
    frame = handshake.auth_request(
        minion, key(signer), crypto.public_pem(key("minion")), token, nonce, finger or crypto.fingerprint(master_pub())
    )
    req = handshake.read_auth(wire.decode(frame))
    assert isinstance(req, handshake.AuthRequest)
    return req, token, nonce


def test_hello_challenge_auth_reply_round_trip():
    token = os.urandom(32)
    hello = handshake.read_auth(wire.decode(handshake.hello("m1", token)))
    assert hello == handshake.Hello("m1", token)
    nonce = os.urandom(32)
    offer = handshake.read_challenge(wire.decode(handshake.challenge("m1", token, nonce, master_pub())), "m1", token)
    assert offer == handshake.Offer(nonce, master_pub())
    frame = handshake.auth_request(
        "m1", key("minion"), crypto.public_pem(key("minion")), token, nonce, crypto.fingerprint(offer.master_pub)
    )
    req = handshake.read_auth(wire.decode(frame))
    assert isinstance(req, handshake.AuthRequest) and (req.id, req.token, req.challenge) == ("m1", token, nonce)
    minion_key = handshake.check_auth_signature(req, crypto.fingerprint(master_pub()))
    session = crypto.new_session_key()
    reply = handshake.auth_reply(
        req, "accepted", key("master"), master_pub(), crypto.rsa_encrypt(minion_key, session), b"s" * 32
    )
    got = handshake.read_auth_reply(wire.decode(reply), "m1", token, nonce)
    assert got.status == "accepted" and got.master_pub == master_pub() and got.sign_pub == b"s" * 32
    assert crypto.rsa_decrypt(key("minion"), got.session_enc) == session
    pending = handshake.auth_reply(req, "pending", key("master"), master_pub())
    body = wire.clear_payload(wire.decode(pending))
    assert "session" not in body and "sign_pub" not in body
    assert handshake.read_auth_reply(wire.decode(pending), "m1", token, nonce).status == "pending"


def test_the_signature_binds_key_id_token_challenge_and_master():
    finger = crypto.fingerprint(master_pub())
    req, _, _ = signed_auth()
    handshake.check_auth_signature(req, finger)
    # only the public key: a signature by another key over the same data is refused
    forged, _, _ = signed_auth(signer="attacker")
    with pytest.raises(AuthError, match="not signed by the key it offers"):
        handshake.check_auth_signature(forged, finger)
    # signed for another master (a man in the middle passing its own key along)
    other, _, _ = signed_auth(finger=crypto.fingerprint(crypto.public_pem(key("other master"))))
    with pytest.raises(AuthError):
        handshake.check_auth_signature(other, finger)
    # every field is covered: change one and the signature no longer holds
    for changed in (
        handshake.AuthRequest("m2", req.pub, req.token, req.challenge, req.sig),
        handshake.AuthRequest(req.id, req.pub, os.urandom(32), req.challenge, req.sig),
        handshake.AuthRequest(req.id, req.pub, req.token, os.urandom(32), req.sig),
    ):
        with pytest.raises(AuthError):
            handshake.check_auth_signature(changed, finger)
    with pytest.raises(AuthError, match="PEM public key"):
        handshake.check_auth_signature(handshake.AuthRequest("m1", "junk", req.token, req.challenge, req.sig), finger)


def test_the_minion_refuses_replies_not_for_its_request_or_not_signed():
    req, token, nonce = signed_auth()
    good = handshake.auth_reply(req, "accepted", key("master"), master_pub(), b"x" * 256, b"s" * 32)
    with pytest.raises(AuthError, match="echo"):
        handshake.read_auth_reply(wire.decode(good), "m1", os.urandom(32), nonce)
    with pytest.raises(AuthError, match="echo"):
        handshake.read_auth_reply(wire.decode(good), "m1", token, os.urandom(32))
    with pytest.raises(WireError, match="expected an auth_reply for m2"):
        handshake.read_auth_reply(wire.decode(good), "m2", token, nonce)
    body = wire.clear_payload(wire.decode(good))
    for field, value in (
        ("status", "pending"),
        ("session", b"y" * 256),
        ("sign_pub", b"t" * 32),
        ("master_pub", crypto.public_pem(key("other master"))),
    ):
        tampered = wire.clear("auth_reply", "m1", {**body, field: value}).encode()
        with pytest.raises(AuthError):
            handshake.read_auth_reply(wire.decode(tampered), "m1", token, nonce)
    refused = wire.clear("err", "m1", {"error": "unknown, used or expired challenge"}).encode()
    with pytest.raises(AuthError, match="refused the auth request: unknown"):
        handshake.read_auth_reply(wire.decode(refused), "m1", token, nonce)
    with pytest.raises(AuthError, match="refused"):
        handshake.read_challenge(wire.decode(refused), "m1", token)
    challenge = handshake.challenge("m1", token, nonce, master_pub())
    with pytest.raises(AuthError, match="token"):
        handshake.read_challenge(wire.decode(challenge), "m1", os.urandom(32))


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"token": b"short"},
        {"token": "x" * 32},
        {"token": os.urandom(32), "pub": "pem"},  # no challenge, no sig
        {"token": os.urandom(32), "pub": "pem", "challenge": b"c" * 31, "sig": b"s"},  # short challenge
        {"token": os.urandom(32), "pub": "pem", "challenge": b"c" * 32, "sig": b""},  # empty signature
        {"token": os.urandom(32), "pub": "p" * 20000, "challenge": b"c" * 32, "sig": b"s"},
        {"token": os.urandom(32), "pub": "pem", "challenge": b"c" * 32, "sig": b"s" * 2000},
    ],
)
def test_malformed_auth_payloads_are_wire_errors(payload):
    with pytest.raises(WireError):
        handshake.read_auth(wire.clear("auth", "m1", payload))


# -- the master's publish port (optional fields within protocol version 2) --------------------


def test_the_challenge_and_the_signed_reply_carry_the_publish_port_to_a_minion_that_reads_it():
    token, nonce = os.urandom(32), os.urandom(32)
    offer = handshake.read_challenge(
        wire.decode(handshake.challenge("m1", token, nonce, master_pub(), 4510)), "m1", token
    )
    assert offer.publish_port == 4510
    req, token, nonce = signed_auth()
    assert req.ext == handshake.EXT_PUBLISH_PORT
    reply = handshake.auth_reply(req, "accepted", key("master"), master_pub(), b"x" * 256, b"s" * 32, 4510)
    assert handshake.read_auth_reply(wire.decode(reply), "m1", token, nonce).publish_port == 4510
    # the port is signed: changed or removed on the way, the reply no longer verifies
    body = wire.clear_payload(wire.decode(reply))
    moved = wire.clear("auth_reply", "m1", {**body, "publish_port": 4999}).encode()
    with pytest.raises(AuthError, match="not signed"):
        handshake.read_auth_reply(wire.decode(moved), "m1", token, nonce)
    stripped = wire.clear("auth_reply", "m1", {k: v for k, v in body.items() if k != "publish_port"}).encode()
    with pytest.raises(AuthError, match="not signed"):
        handshake.read_auth_reply(wire.decode(stripped), "m1", token, nonce)


def test_older_peers_still_talk_to_newer_ones():
    # an older minion (no "ext"): the reply is the seven-element one it verifies, without a port
    token, nonce = os.urandom(32), os.urandom(32)
    old = handshake.auth_request("m1", key("minion"), crypto.public_pem(key("minion")), token, nonce, "f", ext=0)
    assert "ext" not in wire.clear_payload(wire.decode(old))
    req = handshake.read_auth(wire.decode(old))
    assert isinstance(req, handshake.AuthRequest) and req.ext == 0
    reply = handshake.auth_reply(req, "accepted", key("master"), master_pub(), b"x" * 256, b"s" * 32, 4510)
    body = wire.clear_payload(wire.decode(reply))
    assert "publish_port" not in body
    seven = handshake.reply_signed_data("m1", token, nonce, "accepted", b"x" * 256, b"s" * 32)
    assert crypto.rsa_verify(crypto.load_public(master_pub()), body["sig"], seven)
    # an older master (no port to name) answers a newer minion as before: no port, still verified
    req, token, nonce = signed_auth()
    reply = handshake.auth_reply(req, "pending", key("master"), master_pub())
    assert handshake.read_auth_reply(wire.decode(reply), "m1", token, nonce).publish_port is None
    plain = handshake.challenge("m1", token, nonce, master_pub())
    assert handshake.read_challenge(wire.decode(plain), "m1", token).publish_port is None


@pytest.mark.parametrize("port", [0, 65536, "4505", True, -1])
def test_a_bad_publish_port_or_ext_is_refused(port):
    token, nonce = os.urandom(32), os.urandom(32)
    body = {"status": "challenge", "challenge": nonce, "master_pub": master_pub(), "token": token, "publish_port": port}
    with pytest.raises(WireError, match="'publish_port' must be a TCP port"):
        handshake.read_challenge(wire.decode(wire.clear("auth_reply", "m1", body).encode()), "m1", token)
    req, token, nonce = signed_auth()
    good = wire.clear_payload(
        wire.decode(handshake.auth_reply(req, "pending", key("master"), master_pub(), b"", b"", 1))
    )
    with pytest.raises(WireError, match="'publish_port' must be a TCP port"):
        frame = wire.clear("auth_reply", "m1", {**good, "publish_port": port}).encode()
        handshake.read_auth_reply(wire.decode(frame), "m1", token, nonce)
    auth = wire.clear_payload(wire.decode(handshake.auth_request("m1", key("minion"), "p", token, nonce, "f")))
    with pytest.raises(WireError, match="'ext' must be a non-negative integer"):
        handshake.read_auth(
            wire.decode(wire.clear("auth", "m1", {**auth, "ext": -1 if port in (0, 65536) else port}).encode())
        )


def test_a_hello_naming_the_pinned_key_gets_a_challenge_without_it():
    from briny.master.auth import MasterAuth

    auth = MasterAuth(None, key("master"), master_pub(), b"s" * 32, lambda: False)  # type: ignore[arg-type]
    token = os.urandom(32)
    finger = crypto.fingerprint(master_pub())
    hello = handshake.read_auth(wire.decode(handshake.hello("m1", token, finger)))
    assert hello == handshake.Hello("m1", token, finger)
    short = wire.decode(auth.hello(hello))
    assert "master_pub" not in wire.clear_payload(short)
    # the minion reads it with the key it pinned; without one the challenge is malformed
    assert handshake.read_challenge(short, "m1", token, master_pub()).master_pub == master_pub()
    with pytest.raises(WireError, match="'master_pub' must be a PEM text"):
        handshake.read_challenge(short, "m1", token)
    full = auth.hello(handshake.Hello("m1", token))  # an older minion: no finger, the key comes along
    other = auth.hello(handshake.Hello("m1", token, crypto.fingerprint(crypto.public_pem(key("minion")))))
    for frame in (full, other):  # another pin: the key comes, so the minion can say it is not its pin
        assert handshake.read_challenge(wire.decode(frame), "m1", token, "ignored").master_pub == master_pub()
    assert len(short.encode()) < len(full) - 300


@pytest.mark.parametrize("finger", [123, b"ab", "", "x" * 201])
def test_a_bad_finger_in_a_hello_is_refused(finger):
    frame = wire.clear("auth", "m1", {"token": os.urandom(32), "finger": finger}).encode()
    with pytest.raises(WireError, match="the hello's 'finger' must be a fingerprint"):
        handshake.read_auth(wire.decode(frame))
