"""The auth handshake (``docs/PROTOCOL.md``, "Trust"), both halves, as pure functions.

Runs in the master (reads hellos and signed auths, writes challenges and
signed replies), in the minion (the other half) and in test clients;
nothing here touches a socket, a file or a key store. Every message is a
clear ``wire`` envelope of kind ``auth`` (minion → master) or
``auth_reply`` / ``err`` (master → minion)::

    minion                                        master
    auth  {"token", "finger"?}               ->   a fresh challenge, kept briefly (no RSA)
          <-  auth_reply {"status": "challenge", "challenge", "master_pub"?, "token", "publish_port"?}
    auth  {"pub", "token", "challenge", "sig", "ext"?} -> the challenge is taken (once), then
          sig = RSA-PSS(minion key, AUTH_LABEL, id, pub, token, challenge, finger(master_pub))
          <-  auth_reply {"status", "master_pub", "token", "challenge", "session"?, "sign_pub"?,
                          "publish_port"?, "sig"}
          sig = RSA-PSS(master key, REPLY_LABEL, id, token, challenge, status, session, sign_pub
                        [, publish_port])

The minion's signature proves it holds the private key of the ``pub`` it
offers, for this master (its key's fingerprint) and this challenge, which
the master issued and accepts once: a captured auth opens nothing later,
not even after a master restart (the new process never issued it). The
master's signature binds its answer to the token and challenge of this
request. A refusal is an ``err`` envelope with ``{"error": <why>}``.

Optional fields keep older peers working within protocol version 2 (unknown payload fields
are ignored by both sides): a master that knows its publish port names it in the challenge
(a hint, unsigned); a minion that reads it says so with ``"ext": EXT_PUBLISH_PORT`` in its
signed auth, and only then does the master's reply carry ``publish_port`` and sign it (as an
eighth element of the signed list). An older master ignores ``ext`` and signs the seven
elements; an older minion never sends ``ext`` and gets the reply it knows. A minion that has
pinned the master's key names its fingerprint in the hello (``"finger"``); when it is the
master's, the challenge leaves out ``master_pub`` (the minion has it), so what anyone may ask
for is small. An older minion sends no ``finger`` and gets the key; an older master ignores
it and sends the key anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import crypto, wire
from .exceptions import AuthError, WireError

TOKEN_BYTES = 32
CHALLENGE_BYTES = 32
MAX_PUB = 16384  # bytes of an offered PEM public key
MAX_SIG = 1024  # bytes of an RSA signature (2048 bits: 256)
MAX_FINGER = 200  # characters of the fingerprint a hello names (sha512 in hex with colons: 191)
AUTH_LABEL = "briny auth v2"
REPLY_LABEL = "briny auth_reply v2"
STATUSES = ("accepted", "pending", "rejected", "denied")
EXT_PUBLISH_PORT = 1  # the auth's "ext": this minion reads the signed publish_port of the reply


@dataclass(frozen=True)
class Hello:
    """The first step: a minion asks for a challenge (``token`` comes back with it)."""

    id: str
    token: bytes
    finger: str | None = None  # the fingerprint of the master key the minion has pinned


@dataclass(frozen=True)
class Offer:
    """The master's challenge, as the minion reads it."""

    challenge: bytes
    master_pub: str
    publish_port: int | None = None  # the master's publish port, unsigned (confirmed by the reply)


@dataclass(frozen=True)
class AuthRequest:
    """The second step: the signed auth, as the master reads it (signature not yet checked)."""

    id: str
    pub: str
    token: bytes
    challenge: bytes
    sig: bytes
    ext: int = 0  # the handshake extensions the minion reads (EXT_PUBLISH_PORT)

    def signed(self, master_finger: str) -> bytes:
        return auth_signed_data(self.id, self.pub, self.token, self.challenge, master_finger)


@dataclass(frozen=True)
class AuthReply:
    """The master's signed answer, as the minion reads it (signature checked with ``master_pub``)."""

    status: str
    master_pub: str
    session_enc: bytes
    sign_pub: bytes
    publish_port: int | None = None  # signed; None from a master that does not send it


def _bytes(value: Any, size: int, what: str) -> bytes:
    if not isinstance(value, bytes) or len(value) != size:
        raise WireError(f"{what} must be {size} bytes")
    return value


def _text(value: Any, limit: int, what: str) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str) or not value or len(value) > limit:
        raise WireError(f"{what} must be a PEM text of 1 to {limit} characters")
    return value


def _port(value: Any, what: str) -> int | None:
    """A TCP port field (None when absent); WireError for anything but an integer 1-65535."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 65536:
        raise WireError(f"{what} must be a TCP port (1-65535)")
    return value


def _refusal(env: wire.Envelope) -> AuthError:
    error = wire.clear_payload(env).get("error")
    return AuthError(f"the master refused the auth request: {str(error)[:200]}")


# -- minion → master -------------------------------------------------------------------------


def hello(minion_id: str, token: bytes, finger: str | None = None) -> bytes:
    """The frame asking the master for a challenge; ``finger``: the fingerprint (sha256) of the
    master key this minion has pinned (the challenge then leaves the key out, if it is that)."""
    body: dict[str, Any] = {"token": token}
    if finger:
        body["finger"] = finger
    return wire.clear("auth", minion_id, body).encode()


def auth_signed_data(minion_id: str, pub: str, token: bytes, challenge: bytes, master_finger: str) -> bytes:
    """What the minion signs: its id and key, this request, this challenge, the master's key."""
    return wire.pack([AUTH_LABEL, minion_id, pub, token, challenge, master_finger])


def auth_request(
    minion_id: str,
    priv: crypto.RSAPrivate,
    pub: str,
    token: bytes,
    challenge: bytes,
    master_finger: str,
    ext: int = EXT_PUBLISH_PORT,
) -> bytes:
    """The signed auth frame (one RSA private-key operation, on the minion); ``ext`` 0 makes
    the frame an older minion sends."""
    sig = crypto.rsa_sign(priv, auth_signed_data(minion_id, pub, token, challenge, master_finger))
    body: dict[str, Any] = {"pub": pub, "token": token, "challenge": challenge, "sig": sig}
    if ext:
        body["ext"] = ext
    return wire.clear("auth", minion_id, body).encode()


def read_auth(env: wire.Envelope) -> Hello | AuthRequest:
    """A minion's ``auth`` envelope: a :class:`Hello` or an :class:`AuthRequest`; WireError when
    it is neither."""
    if env.kind != "auth":
        raise WireError(f"expected an auth message, got {env.kind}")
    payload = wire.clear_payload(env)
    token = _bytes(payload.get("token"), TOKEN_BYTES, "the auth 'token'")
    if "challenge" not in payload and "sig" not in payload and "pub" not in payload:
        finger = payload.get("finger")
        if finger is not None and (not isinstance(finger, str) or not 0 < len(finger) <= MAX_FINGER):
            raise WireError(f"the hello's 'finger' must be a fingerprint of 1 to {MAX_FINGER} characters")
        return Hello(env.id, token, finger)
    pub = _text(payload.get("pub"), MAX_PUB, "the auth 'pub'")
    challenge = _bytes(payload.get("challenge"), CHALLENGE_BYTES, "the auth 'challenge'")
    sig = payload.get("sig")
    if not isinstance(sig, bytes) or not sig or len(sig) > MAX_SIG:
        raise WireError("the auth 'sig' must be an RSA signature")
    ext = payload.get("ext", 0)
    if isinstance(ext, bool) or not isinstance(ext, int) or ext < 0:
        raise WireError("the auth 'ext' must be a non-negative integer")
    return AuthRequest(env.id, pub, token, challenge, sig, ext)


def check_auth_signature(req: AuthRequest, master_finger: str) -> crypto.RSAPublic:
    """The offered key, once it verified the request's signature (one RSA public-key operation);
    AuthError when the key is unusable or did not sign this request for this master."""
    key = crypto.load_public(req.pub)
    if not crypto.rsa_verify(key, req.sig, req.signed(master_finger)):
        raise AuthError("the auth request is not signed by the key it offers (for this master and this challenge)")
    return key


# -- master → minion -------------------------------------------------------------------------


def challenge(
    minion_id: str, token: bytes, nonce: bytes, master_pub: str | None, publish_port: int | None = None
) -> bytes:
    """The answer to a hello (no RSA: anyone may ask for one), with the master's key (None: the
    hello named its fingerprint) and its publish port when given."""
    body: dict[str, Any] = {"status": "challenge", "challenge": nonce, "token": token}
    if master_pub is not None:
        body["master_pub"] = master_pub
    if publish_port is not None:
        body["publish_port"] = publish_port
    return wire.clear("auth_reply", minion_id, body).encode()


def read_challenge(env: wire.Envelope, minion_id: str, token: bytes, pinned: str | None = None) -> Offer:
    """The minion's reading of the answer to its hello; AuthError for a refusal or a reply that
    is not for this hello, WireError for a malformed one. ``pinned``: the master key whose
    fingerprint the hello named, the offer's key when the challenge leaves it out."""
    if env.kind == "err":
        raise _refusal(env)
    if env.kind != "auth_reply" or env.id != minion_id:
        raise WireError(f"expected an auth_reply for {minion_id}, got {env.kind} for {env.id!r}")
    data = wire.clear_payload(env)
    if data.get("token") != token:
        raise AuthError("the challenge does not echo this hello's token")
    if data.get("status") != "challenge":
        raise WireError(f"expected a challenge, got status {str(data.get('status'))[:40]!r}")
    nonce = _bytes(data.get("challenge"), CHALLENGE_BYTES, "the challenge")
    if data.get("master_pub") is None and pinned is not None:
        master_pub = pinned  # the master knows the minion has it (its hello named it)
    else:
        master_pub = _text(data.get("master_pub"), MAX_PUB, "the challenge's 'master_pub'")
    return Offer(nonce, master_pub, _port(data.get("publish_port"), "the challenge's 'publish_port'"))


def reply_signed_data(
    minion_id: str,
    token: bytes,
    challenge_: bytes,
    status: str,
    session_enc: bytes,
    sign_pub: bytes,
    publish_port: int | None = None,
) -> bytes:
    """What the master signs in its answer to a signed auth (the publish port last, when the
    reply carries it)."""
    signed: list[Any] = [REPLY_LABEL, minion_id, token, challenge_, status, session_enc, sign_pub]
    if publish_port is not None:
        signed.append(publish_port)
    return wire.pack(signed)


def auth_reply(
    req: AuthRequest,
    status: str,
    master_priv: crypto.RSAPrivate,
    master_pub: str,
    session_enc: bytes = b"",
    sign_pub: bytes = b"",
    publish_port: int | None = None,
) -> bytes:
    """The master's signed answer (its one RSA private-key operation per auth). ``session_enc``
    and ``sign_pub`` only with ``accepted``; ``publish_port`` only to a minion that reads it
    (``req.ext``)."""
    if status not in STATUSES:
        raise ValueError(f"unknown auth status {status!r}")
    port = publish_port if req.ext >= EXT_PUBLISH_PORT else None
    sig = crypto.rsa_sign(
        master_priv, reply_signed_data(req.id, req.token, req.challenge, status, session_enc, sign_pub, port)
    )
    body: dict[str, Any] = {
        "status": status,
        "master_pub": master_pub,
        "token": req.token,
        "challenge": req.challenge,
        "sig": sig,
    }
    if status == "accepted":
        body["session"] = session_enc
        body["sign_pub"] = sign_pub
    if port is not None:
        body["publish_port"] = port
    return wire.clear("auth_reply", req.id, body).encode()


def read_auth_reply(env: wire.Envelope, minion_id: str, token: bytes, challenge_: bytes) -> AuthReply:
    """The minion's reading of the answer to its signed auth, its signature checked with the
    ``master_pub`` it carries (the caller checks that key against the pinned one and
    ``master_finger``); AuthError when it is a refusal, not for this request, or not signed."""
    if env.kind == "err":
        raise _refusal(env)
    if env.kind != "auth_reply" or env.id != minion_id:
        raise WireError(f"expected an auth_reply for {minion_id}, got {env.kind} for {env.id!r}")
    data = wire.clear_payload(env)
    status, sig = data.get("status"), data.get("sig")
    session_enc, sign_pub = data.get("session", b""), data.get("sign_pub", b"")
    if data.get("token") != token or data.get("challenge") != challenge_:
        raise AuthError("the auth reply does not echo this request's token and challenge")
    if status not in STATUSES:
        raise AuthError(f"unknown auth status {str(status)[:40]!r}")
    master_pub = _text(data.get("master_pub"), MAX_PUB, "the auth reply's 'master_pub'")
    if not isinstance(sig, bytes) or not isinstance(session_enc, bytes) or not isinstance(sign_pub, bytes):
        raise AuthError("the auth reply's signature, session or signing key is not bytes")
    port = _port(data.get("publish_port"), "the auth reply's 'publish_port'")
    signed = reply_signed_data(minion_id, token, challenge_, status, session_enc, sign_pub, port)
    if not crypto.rsa_verify(crypto.load_public(master_pub), sig, signed):
        raise AuthError("the auth reply is not signed by the master's key")
    return AuthReply(status, master_pub, session_enc, sign_pub, port)
