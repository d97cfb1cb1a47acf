"""The one versioned wire envelope for every message between daemons.

Runs in the master, the minions and the operator CLIs. One ZeroMQ frame is
one msgpack map::

    {"v": 2,            protocol version; a peer refuses any other
     "k": "req",        kind: auth | auth_reply | req | rep | pub | err
     "id": "web1",      the minion the message is from (auth, req) or for (auth_reply, rep, pub)
     "t": 1732170000.1, sender's clock, seconds (replay window)
     "n": <12 bytes>,   nonce: AES-GCM nonce and replay key
     "b": <bytes>,      body: AES-GCM(msgpack(payload)) for req/rep/pub;
                        plain msgpack(payload) for auth/auth_reply/err
     "s": <bytes>}      pub only: the master's Ed25519 signature over header + body

The header ``[v, k, id, t, n]`` is the associated data of the AES-GCM body,
so a sealed body cannot be replayed under another id, kind or time. The
receiver checks, in this order: the frame parses and every field has its
type (:func:`decode`); the version; for sealed kinds the body opens with
that minion's session key (:func:`open_sealed`); the time is inside the
replay window and the nonce was not seen before (:class:`ReplayGuard`).
Anything that fails raises :class:`WireError` (or :class:`AuthError`), which
the daemons log and drop: a bad frame never crashes a daemon.

Before auth only ``auth`` is accepted from a peer; ``auth_reply`` carries
the session key encrypted to the minion's RSA key (the handshake is
:mod:`handshake`). A ``rep`` is bound to the ``req`` it answers: its sealed
body is ``{"re": <the request's nonce>, "p": payload}``
(:func:`sealed_reply` / :func:`open_reply`), so a reply moved to another
request is refused.

Decoding never trusts the bytes (``docs/PROTOCOL.md``, "Frame limits"): the
envelope and every clear payload are *flat* maps of at most
:data:`MAX_FIELDS` scalar fields, read field by field so a frame of nested
containers is refused at its first container instead of being built (an
8 MiB array of empty maps would cost ~600 MiB); a clear frame (``auth``,
``auth_reply``, ``err``: what a peer without a session can send) is at most
:data:`MAX_CLEAR_FRAME` bytes; a sealed body (opened only with a session
key) at most :data:`MAX_FRAME`, unpacked with :data:`BODY_LIMITS`.
The decoders are :mod:`briny.common.unpacking`'s, shared with the event bus
and the local IPC.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import msgpack

from . import crypto
from .exceptions import AuthError, WireError
from .unpacking import unpack_flat

# part of wire's interface too (wire.unpack, wire.Limits, ...): re-exported with `as`
from .unpacking import MAX_FRAME as MAX_FRAME
from .unpacking import Limits as Limits
from .unpacking import unpack as unpack

VERSION = 2  # 2: auth with challenge and proof of possession; replies bound to requests
KINDS = frozenset({"auth", "auth_reply", "req", "rep", "pub", "err"})
SEALED = frozenset({"req", "rep", "pub"})
MAX_CLEAR_FRAME = 64 * 1024  # a clear frame (auth, auth_reply, err): all a peer without a session sends
MAX_FIELDS = 16  # fields of the envelope and of a clear payload
MAX_ID_BYTES = 1024  # the envelope's strings (an id is at most 255 characters)
REPLAY_WINDOW = 300.0


def _default(obj: Any) -> Any:
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def pack(payload: Any) -> bytes:
    return msgpack.packb(payload, use_bin_type=True, default=_default)


def frame_limit(kind: str) -> int:
    """The most bytes a frame of ``kind`` may have: sealed kinds :data:`MAX_FRAME`, clear ones
    (everything a peer without a session can send) :data:`MAX_CLEAR_FRAME`."""
    return MAX_FRAME if kind in SEALED else MAX_CLEAR_FRAME


@dataclass(frozen=True)
class Envelope:
    kind: str
    id: str
    ts: float
    nonce: bytes
    body: bytes
    sig: bytes = b""
    version: int = VERSION

    def header(self) -> bytes:
        return pack([self.version, self.kind, self.id, self.ts, self.nonce])

    def encode(self) -> bytes:
        frame = {"v": self.version, "k": self.kind, "id": self.id, "t": self.ts, "n": self.nonce, "b": self.body}
        if self.sig:
            frame["s"] = self.sig
        return pack(frame)


def decode(frame: bytes) -> Envelope:
    """Parse and type-check one frame; WireError for anything else."""
    if not isinstance(frame, (bytes, bytearray, memoryview)):
        raise WireError("frame is not bytes")
    if len(frame) > MAX_FRAME:
        raise WireError(f"frame of {len(frame)} bytes is over the {MAX_FRAME} limit")
    try:
        data = unpack_flat(frame, max(MAX_ID_BYTES, len(frame)), MAX_FIELDS)
    except WireError as exc:
        raise WireError(f"frame is not an envelope: {exc}") from None
    for name in ("v", "k", "id", "t", "n"):
        if isinstance(data.get(name), (str, bytes)) and len(data[name]) > MAX_ID_BYTES:
            raise WireError(f"envelope field {name!r} is too long")
    version, kind, id_, ts, nonce, body = (data.get(k) for k in ("v", "k", "id", "t", "n", "b"))
    sig = data.get("s", b"")
    if version != VERSION:
        raise WireError(f"unsupported protocol version {version!r} (this side speaks {VERSION})")
    if kind not in KINDS:
        raise WireError(f"unknown message kind {kind!r}")
    if not isinstance(id_, str) or not id_ or len(id_) > 255:
        raise WireError("bad id field")
    if not isinstance(ts, (int, float)) or isinstance(ts, bool):
        raise WireError("bad time field")
    if not isinstance(nonce, bytes) or len(nonce) != crypto.NONCE_BYTES:
        raise WireError("bad nonce field")
    if not isinstance(body, bytes) or not isinstance(sig, bytes):
        raise WireError("bad body or signature field")
    return Envelope(kind=kind, id=id_, ts=float(ts), nonce=nonce, body=body, sig=sig, version=version)


def clear(kind: str, id_: str, payload: dict[str, Any]) -> Envelope:
    """An unsealed message (auth handshake and plain errors)."""
    if kind in SEALED:
        raise WireError(f"{kind} messages must be sealed")
    return Envelope(kind=kind, id=id_, ts=time.time(), nonce=crypto.new_nonce(), body=pack(payload))


def clear_payload(env: Envelope) -> dict[str, Any]:
    if env.kind in SEALED:
        raise WireError(f"{env.kind} messages are sealed")
    if len(env.body) > MAX_CLEAR_FRAME:
        raise WireError(f"a {env.kind} payload of {len(env.body)} bytes (at most {MAX_CLEAR_FRAME})")
    return unpack_flat(env.body, MAX_CLEAR_FRAME, MAX_FIELDS)


def sealed(kind: str, id_: str, key: bytes, payload: Any) -> Envelope:
    """A message sealed with ``key`` (AES-256-GCM), bound to its header."""
    if kind not in SEALED:
        raise WireError(f"{kind} messages are not sealed")
    proto = Envelope(kind=kind, id=id_, ts=time.time(), nonce=crypto.new_nonce(), body=b"")
    body = crypto.seal(key, proto.nonce, pack(payload), proto.header())
    return Envelope(kind=kind, id=id_, ts=proto.ts, nonce=proto.nonce, body=body)


def open_sealed(env: Envelope, key: bytes) -> Any:
    """The payload of a sealed message; AuthError when the key or header do not match."""
    if env.kind not in SEALED:
        raise WireError(f"{env.kind} messages are not sealed")
    return unpack(crypto.unseal(key, env.nonce, env.body, env.header()))


def sealed_reply(id_: str, key: bytes, request_nonce: bytes, payload: Any) -> Envelope:
    """The ``rep`` answering the request whose nonce is ``request_nonce``."""
    return sealed("rep", id_, key, {"re": request_nonce, "p": payload})


def open_reply(env: Envelope, key: bytes, request_nonce: bytes) -> Any:
    """The payload of a ``rep``; AuthError when it does not open with ``key`` or answers another
    request than the one whose nonce is ``request_nonce``."""
    if env.kind != "rep":
        raise WireError(f"expected a rep, got {env.kind}")
    body = open_sealed(env, key)
    if not isinstance(body, dict) or "p" not in body:
        raise WireError("a rep body must be a map with 're' and 'p'")
    if body.get("re") != request_nonce:
        raise AuthError("the reply answers another request (moved or replayed)")
    return body["p"]


def sign(env: Envelope, signing_key: Any) -> Envelope:
    sig = crypto.ed_sign(signing_key, env.header() + env.body)
    return Envelope(kind=env.kind, id=env.id, ts=env.ts, nonce=env.nonce, body=env.body, sig=sig, version=env.version)


def verify(env: Envelope, public_raw: bytes) -> None:
    if not env.sig or not crypto.ed_verify(public_raw, env.sig, env.header() + env.body):
        raise AuthError("publish is not signed by the master")


class ReplayGuard:
    """Refuses messages outside the time window or whose nonce was already seen.

    Memory is bounded by the traffic of one window: nonces older than the
    window are forgotten, since a message that old is refused by its time.
    """

    def __init__(self, window: float = REPLAY_WINDOW) -> None:
        self.window = window
        self._seen: set[tuple[str, bytes]] = set()
        self._order: deque[tuple[float, tuple[str, bytes]]] = deque()

    def check(self, env: Envelope, now: float | None = None) -> None:
        now = time.time() if now is None else now
        while self._order and self._order[0][0] < now - self.window:
            self._seen.discard(self._order.popleft()[1])
        if abs(now - env.ts) > self.window:
            raise AuthError(f"stale message from {env.id} ({now - env.ts:+.0f} s outside the window)")
        key = (env.id, env.nonce)
        if key in self._seen:
            raise AuthError(f"replayed message from {env.id}")
        self._seen.add(key)
        self._order.append((now, key))
