"""The minion's half of the auth handshake: its identity, the master's key, one session per auth.

Owns the minion's RSA identity (``pki_dir/minion.pem`` 0600 and
``minion.pub``, made on first start), the master key pinning
(``pki_dir/minion_master.pub``, pinned on the first accepted auth) and the
``master_finger`` check, and one handshake (``docs/PROTOCOL.md``, "Trust"):
a hello, the master's challenge (its key checked against the pinned one and
``master_finger`` before anything is signed), the auth signed with this
minion's key, the master's signed answer; the transport's subscription moves
to the publish port the master names (in its challenge, confirmed by the
signed answer) unless this minion's ``publish_port`` is its own (not 4505).
An accepted answer gives a :class:`Session` (its session key, the master's
publish-signing key, a replay guard); the caller (:class:`briny.minion.agent.MinionAgent`)
decides when to try again.

Threads: **the loop**. Reading and writing the key files and the RSA
operations of one auth (a signature, a decryption: about a millisecond)
run on it; they happen once per connection.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from briny.common import config, crypto, handshake, wire
from briny.common.atomicfile import write_atomic
from briny.common.exceptions import AuthError, WireError
from briny.common.transport import ClientTransport

log = logging.getLogger(__name__)


@dataclass
class Session:
    """One authenticated connection: lives from an accepted auth until it is found dead."""

    transport: ClientTransport
    key: bytes
    sign_pub: bytes
    guard: wire.ReplayGuard = field(default_factory=wire.ReplayGuard)
    dead: asyncio.Event = field(default_factory=asyncio.Event)
    since: float = field(default_factory=time.monotonic)
    heard: float = field(default_factory=time.monotonic)  # the last reply that checked out (monotonic)


@dataclass
class AuthOutcome:
    """What one auth attempt gave: ``accepted`` with a session; else ``pending``, ``rejected``,
    ``denied`` (the master's answer), ``no_reply`` or ``refused`` (the answer did not check out)."""

    status: str
    session: Session | None = None


class MinionAuth:
    """This minion's identity and its handshake with the master (loop)."""

    def __init__(self, opts: dict[str, Any], minion_id: str, timeout: float, *, check_key: bool = True) -> None:
        self.master = "the master"  # as logs name it (:meth:`for_master`)
        self.id = minion_id
        self.timeout = timeout  # seconds to wait for each answer of the master
        pki = Path(str(config.setting(opts, "pki_dir", "minion")))
        self.pki_dir = pki
        self.master_pub_path = pki / "minion_master.pub"
        self.shared_pub_path = self.master_pub_path  # checked when master_pub_path is not there yet
        self.master_finger = str(config.setting(opts, "master_finger"))
        self.hash_type = str(config.setting(opts, "hash_type"))  # of master_finger, as Salt's
        # a publish_port of its own (not the default) is deliberate (a port forward): it wins over
        # the port each master names in its auth reply (docs/scaling.md, "Multi-master")
        self.follow_publish_port = config.count(opts, "publish_port") == config.default("publish_port", "minion")
        if self.master_finger:
            crypto.fingerprint("", self.hash_type)  # ConfigError now for a hash_type briny lacks
        # check_key=False: briny-swarm, whose thousands of keys it made itself (crypto.load_or_create_rsa)
        self._priv = crypto.load_or_create_rsa(pki / "minion.pem", pki / "minion.pub", check=check_key)
        self.pub_pem = crypto.public_pem(self._priv)

    def for_master(self, name: str, pin: Path) -> MinionAuth:
        """This identity, authenticating with the master ``name`` whose key is pinned in ``pin``
        (multi-master: :mod:`briny.minion.masters`)."""
        other = copy.copy(self)
        other.master, other.master_pub_path = name, pin
        return other

    async def authenticate(self, transport: ClientTransport) -> AuthOutcome:
        """One handshake on ``transport`` (see the module docstring)."""
        token = os.urandom(handshake.TOKEN_BYTES)
        try:
            known = self._pinned()[0]  # named by fingerprint: the challenge need not carry it
            finger = crypto.fingerprint(known) if known is not None else None
            raw = await transport.request(handshake.hello(self.id, token, finger), self.timeout)
            if raw is None:
                return self._no_reply()
            offer = handshake.read_challenge(wire.decode(raw), self.id, token, known)
            pinned = self._check_master(offer.master_pub)
            if offer.publish_port is not None and self.follow_publish_port:
                transport.follow_publishes(offer.publish_port)  # now: connected before the first job
            frame = handshake.auth_request(
                self.id, self._priv, self.pub_pem, token, offer.challenge, crypto.fingerprint(offer.master_pub)
            )
            raw = await transport.request(frame, self.timeout)
            if raw is None:
                return self._no_reply()
            reply = handshake.read_auth_reply(wire.decode(raw), self.id, token, offer.challenge)
            if crypto.fingerprint(reply.master_pub) != crypto.fingerprint(offer.master_pub):
                raise AuthError("the auth reply carries another master key than its challenge")
            if reply.publish_port != offer.publish_port:
                raise AuthError("the auth reply names another publish port than its challenge")
            opened = self._open_session(reply, pinned)
        except WireError as exc:
            log.error("auth with %s refused: %s", self.master, exc)
            return AuthOutcome("refused")
        if opened is None:
            return AuthOutcome(reply.status)
        return AuthOutcome("accepted", Session(transport, opened[0], opened[1]))

    def _no_reply(self) -> AuthOutcome:
        log.info("%s did not answer the auth request within %.1f s", self.master, self.timeout)
        return AuthOutcome("no_reply")

    def _check_master(self, master_pub: str) -> bool:
        """AuthError unless ``master_pub`` is the pinned master key (when one is pinned: this
        master's own, else the shared ``minion_master.pub``) and has the fingerprint
        ``master_finger`` names (when set, with ``hash_type`` as Salt computes it); whether this
        master's own key file is there."""
        pinned, path, own = self._pinned()
        if pinned is not None and crypto.fingerprint(pinned) != crypto.fingerprint(master_pub):
            raise AuthError(
                f"the key of {self.master} (fingerprint {crypto.fingerprint(master_pub)}) is not the "
                f"pinned one in {path}; if the master's key really changed, remove that file"
            )
        if self.master_finger:
            finger = crypto.fingerprint(master_pub, self.hash_type)
            if not crypto.same_fingerprint(self.master_finger, finger):
                raise AuthError(
                    f"the key fingerprint of {self.master} {finger} ({self.hash_type}) does not match "
                    f"master_finger {self.master_finger}"
                )
        return own

    def _pinned(self) -> tuple[str | None, Path, bool]:
        """(the pinned master key or None, its file, whether that is this master's own file)."""
        own = self._read_pin(self.master_pub_path)
        if own is not None:
            return own, self.master_pub_path, True
        return self._shared_pin(), self.shared_pub_path, False

    def _open_session(self, reply: handshake.AuthReply, pinned: bool) -> tuple[bytes, bytes] | None:
        """(session key, publish signing key) of an accepted reply (pinning the master's key on
        the first one); None for any other status."""
        if reply.status != "accepted":
            return None
        key = crypto.rsa_decrypt(self._priv, reply.session_enc)
        if len(key) != crypto.SESSION_KEY_BYTES or len(reply.sign_pub) != 32:
            raise AuthError("the auth reply's session key or signing key has the wrong size")
        if not pinned:
            self._pin_master(reply.master_pub, crypto.fingerprint(reply.master_pub, self.hash_type))
        return key, reply.sign_pub

    def _shared_pin(self) -> str | None:
        return None if self.shared_pub_path == self.master_pub_path else self._read_pin(self.shared_pub_path)

    @staticmethod
    def _read_pin(path: Path) -> str | None:
        try:
            return path.read_text(encoding="ascii")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise AuthError(f"cannot read the pinned master key {path}: {exc}") from None

    def _pin_master(self, pem: str, finger: str) -> None:
        self.pki_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(self.master_pub_path, pem.encode("ascii"), 0o644)
        log.info("pinned the key of %s (fingerprint %s) in %s", self.master, finger, self.master_pub_path)
