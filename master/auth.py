"""The master's half of the auth handshake: challenges, proof of possession, the decision.

Runs in the master daemon, under :class:`briny.master.server.MasterServer`,
which owns the sessions; the messages themselves are
:mod:`briny.common.handshake`. Where things run:

- **on the loop** (cheap, no RSA): answering a hello with a challenge
  (:meth:`MasterAuth.hello`) and taking the challenge of a signed auth
  (:meth:`MasterAuth.claim`), so two copies of one auth cannot both pass;
- **in a worker thread**: :meth:`MasterAuth.decide` — the minion's
  signature (an RSA public-key operation), the key store decision (key
  files), the session key encrypted to the minion (public-key) and the
  signed reply: the master's only RSA private-key operation per auth.

Challenges live in memory only (:class:`Challenges`: a fixed ring of
``CHALLENGE_LIMIT`` slots), each good for ``CHALLENGE_TTL`` seconds and used
once: a flood of hellos costs no memory beyond the ring (the oldest
challenges give way), and an auth captured before a master restart names a
challenge the new process never issued.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from briny.common import crypto, handshake
from briny.common.exceptions import AuthError
from briny.common.ids import id_problem
from briny.master.keys.store import KeyStore

log = logging.getLogger(__name__)

CHALLENGE_TTL = 30.0  # seconds a minion has to answer its challenge
CHALLENGE_LIMIT = 131072  # challenges outstanding at most (a ring of 1 MiB)
ACTS = {"accepted": "accept", "pending": "pend", "rejected": "reject", "denied": "denied"}


class Challenges:
    """Challenges issued and not yet used (loop only): each is bound to the id it was issued
    for, taken at most once, and good for ``ttl`` seconds; at most ``limit`` are outstanding.

    A challenge is ``serial (8 bytes) | HMAC-SHA256(secret, serial | id)[:24]`` with a secret
    made at start, so a new master process knows none of the old ones. The table is a ring of
    ``limit`` slots holding each serial's issue time (0 once used): fixed memory (8 bytes a
    slot, allocated once), whatever the number of hellos; a serial issued ``limit`` hellos ago
    has lost its slot.
    """

    def __init__(
        self, ttl: float = CHALLENGE_TTL, limit: int = CHALLENGE_LIMIT, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.limit = max(1, limit)
        self.clock = clock
        self.evicted = 0  # challenges whose slot was reused before they were answered
        self._secret = os.urandom(32)
        self._issued = array("d", bytes(8 * self.limit))  # issue time per slot; 0.0 = free
        self._next = 0

    def _tag(self, serial: int, minion_id: str) -> bytes:
        msg = serial.to_bytes(8, "big") + minion_id.encode("utf-8", "surrogatepass")
        return hmac.new(self._secret, msg, hashlib.sha256).digest()[: handshake.CHALLENGE_BYTES - 8]

    def __len__(self) -> int:
        """Outstanding challenges (unused and fresh); a scan of the ring, for tests and stats."""
        now = self.clock()
        return sum(1 for t in self._issued if t and now - t < self.ttl)

    def issue(self, minion_id: str) -> bytes:
        now = max(self.clock(), 1e-9)
        serial = self._next
        self._next += 1
        slot = serial % self.limit
        old = self._issued[slot]
        if old and now - old < self.ttl:
            self.evicted += 1
        self._issued[slot] = now
        return serial.to_bytes(8, "big") + self._tag(serial, minion_id)

    def take(self, minion_id: str, nonce: bytes) -> bool:
        """True (and the challenge is used up) when ``nonce`` was issued by this object to
        ``minion_id``, is still fresh and was not taken before; False otherwise (a challenge
        issued to another id stays as it was)."""
        if len(nonce) != handshake.CHALLENGE_BYTES:
            return False
        serial = int.from_bytes(nonce[:8], "big")
        if not self._next - self.limit <= serial < self._next:
            return False
        if not hmac.compare_digest(nonce[8:], self._tag(serial, minion_id)):
            return False
        slot = serial % self.limit
        issued = self._issued[slot]
        if not issued:
            return False
        self._issued[slot] = 0.0
        return self.clock() - issued < self.ttl


@dataclass
class AuthResult:
    """One decided auth: the reply frame, the status, the new session key (accepted only), the
    ``salt/auth`` event data, and when the key store decision was made (monotonic: a read of
    the key store that starts later sees it, and any change after it)."""

    frame: bytes
    status: str
    key: bytes | None
    event: dict[str, Any]
    decided_at: float = 0.0


class MasterAuth:
    """The master's auth decisions over its key store (see the module docstring)."""

    def __init__(
        self,
        keys: KeyStore,
        master_priv: crypto.RSAPrivate,
        master_pub: str,
        sign_pub: bytes,
        auto_accept: Callable[[], bool],
        challenges: Challenges | None = None,
        publish_port: int | None = None,
    ) -> None:
        self.keys = keys
        self._priv = master_priv
        self.master_pub = master_pub
        self.finger = crypto.fingerprint(master_pub)  # what a minion's signature names
        self.sign_pub = sign_pub
        self.auto_accept = auto_accept
        self.challenges = challenges or Challenges()
        self.publish_port = publish_port  # named to minions in the challenge and the signed reply

    def hello(self, req: handshake.Hello) -> bytes:
        """The challenge frame for a hello (loop): without the master's key when the hello names its
        fingerprint (the minion has pinned it). AuthError for an id briny refuses."""
        problem = id_problem(req.id)
        if problem is not None:
            raise AuthError(f"bad minion id: {problem}")
        pub = None if req.finger is not None and crypto.same_fingerprint(req.finger, self.finger) else self.master_pub
        return handshake.challenge(req.id, req.token, self.challenges.issue(req.id), pub, self.publish_port)

    def claim(self, req: handshake.AuthRequest) -> None:
        """Take the request's challenge (loop, before any RSA); AuthError when it was not issued to
        this id by this master process, was used already, or expired."""
        if not self.challenges.take(req.id, req.challenge):
            raise AuthError("unknown, used or expired challenge; ask for a new one")

    def decide(self, req: handshake.AuthRequest) -> AuthResult:
        """Worker thread, after :meth:`claim` (so the id is one a challenge was issued to): the proof
        of possession, the key store decision, the signed reply. AuthError when the signature
        does not verify (nothing is recorded then)."""
        minion_key = handshake.check_auth_signature(req, self.finger)
        decision = self.keys.authorize(req.id, req.pub, bool(self.auto_accept()))
        decided_at = time.monotonic()
        status = decision.status
        key: bytes | None = None
        session_enc = sign_pub = b""
        if status == "accepted":
            key = crypto.new_session_key()
            session_enc = crypto.rsa_encrypt(minion_key, key)
            sign_pub = self.sign_pub
        frame = handshake.auth_reply(req, status, self._priv, self.master_pub, session_enc, sign_pub, self.publish_port)
        event = dict(decision.event)
        event.setdefault("act", ACTS.get(status, status))
        event.setdefault("result", status in ("accepted", "pending"))
        return AuthResult(frame, status, key, event, decided_at)
