"""The master's key store: its own RSA key pair and the minions' public keys.

Runs on the master host, in the master daemon (the auth decision on every
handshake) and in ``briny-key`` (the operator's accept/reject/delete).

- ``pki_dir/master.pem`` / ``master.pub``: the master's RSA 2048 key pair, made on
  first use (``ensure_master_keys``); the private key is mode 0600. It never
  leaves the master's disk, whatever ``key_store`` says.
- the minions' public keys in four states (Salt's folders ``minions``,
  ``minions_pre``, ``minions_rejected``, ``minions_denied``), in a key table
  (:mod:`briny.master.keys.table`) that ``key_store`` names: ``files`` (the
  default: the folders under ``pki_dir``, :mod:`briny.master.keys.fs`) or
  ``postgres`` (a table several masters share, :mod:`briny.master.keys.pg`).

Every id is validated with :mod:`briny.common.ids` first. Changes run within
the table's lock, so the daemon, ``briny-key`` and other masters do not
interleave.

The auth decision (:meth:`KeyStore.authorize`, :meth:`KeyStore.register`)
is Salt 3007's, checked in the order Salt checks it:

1. a key in ``minions_rejected`` → ``"rejected"`` (whatever key is offered);
2. an accepted key: the same key → ``"accepted"``; a different key → the
   offered key is written to ``minions_denied`` and the answer is
   ``"denied"`` (the accepted key stays);
3. no pending key (a new minion, or one known only as denied): written to
   ``minions_pre`` → ``"pending"``, or to ``minions`` → ``"accepted"`` with
   ``auto_accept``;
4. a pending key: the same key → ``"pending"`` (``"accepted"`` with
   ``auto_accept``, the key moves); a different key does NOT replace it:
   the offered key is written to ``minions_denied`` and the answer is
   ``"denied"``.

Case 2 with the same key (every re-auth of a known minion) changes nothing and
is read without the change lock: cheap, and answered from the last reads when
a shared table's database is away.

Keys are compared by their RSA numbers, so PEM formatting does not matter.
Every change comes back as :class:`KeyChange` records; the operator
operations (accept/reject/delete) fire ``salt/key`` events with Salt's data
``{"result": True, "act": "accept"|"reject"|"delete", "id": ...}`` (for
listeners and reactors, as Salt). The auth decision fires nothing itself:
it returns the ``salt/auth`` event data Salt fires (``act`` ``pend``/
``accept``/``denied``) for the daemon to send.

The table is the source of truth: a running master learns of any change,
whoever made it (another master too), by reading it (:mod:`briny.master.keys.watch`,
through :meth:`KeyStore.folders` and :attr:`KeyStore.generation`); nothing here
tells it.

Fingerprints are :func:`briny.common.crypto.fingerprint` (Salt's
``pem_finger``) with the config's ``hash_type`` (default sha256): the same
text ``salt-key -f`` prints, and what a minion's ``master_finger`` is
compared with.
"""

from __future__ import annotations

import contextlib
import fnmatch
import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from briny.common import crypto
from briny.common import config
from briny.common.atomicfile import write_atomic
from briny.common.exceptions import ConfigError, SaltInvocationError
from briny.common.ratelog import LogThrottle
from briny.common.ids import check_id
from briny.master.keys.fs import FolderTable
from briny.master.keys.table import ACC, DEN, FOLDER_OF, KEY_DIRS, MAX_PEM_BYTES, PEND, REJ, STATUS_OF, KeyTable

log = logging.getLogger(__name__)

__all__ = ["ACC", "DEN", "FOLDER_OF", "KEY_DIRS", "LOCAL", "PEND", "REJ", "STATUS_OF", "KeyChange", "KeyStore"]

LOCAL = "local"
MASTER_PEM = "master.pem"
MASTER_PUB = "master.pub"
KEY_SIZE = 2048
MIN_KEY_SIZE = 2048


@dataclass(frozen=True)
class KeyChange:
    """One key file that moved, appeared or went away.

    ``act`` is Salt's event word: ``accept``, ``reject``, ``delete``, ``pend``
    (a new pending key from an auth), ``denied`` (an offered key parked in
    ``minions_denied``). ``src``/``dst`` are folder names or None.
    """

    id: str
    act: str
    src: str | None
    dst: str | None

    def event_data(self) -> dict[str, Any]:
        """The ``salt/key`` event data Salt fires for this change."""
        return {"result": True, "act": self.act, "id": self.id}

    @property
    def revokes(self) -> bool:
        """True when an accepted key went away: the daemon must rotate the session key."""
        return self.src == ACC and self.dst != ACC


@dataclass
class AuthDecision:
    """The answer to one auth request, what it changed, and Salt's ``salt/auth`` data."""

    status: str
    changes: list[KeyChange] = field(default_factory=list)
    event: dict[str, Any] = field(default_factory=dict)


def load_public_pem(pem: bytes | str) -> rsa.RSAPublicKey:
    """Parse a minion's RSA public key (SPKI or PKCS#1 PEM); SaltInvocationError if unusable."""
    data = pem.encode("utf-8") if isinstance(pem, str) else pem
    if not data or len(data) > MAX_PEM_BYTES:
        raise SaltInvocationError("the public key is empty or too large")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise SaltInvocationError(f"the public key does not parse: {exc}") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise SaltInvocationError("the public key is not an RSA key")
    if key.key_size < MIN_KEY_SIZE:
        raise SaltInvocationError(f"the RSA key has {key.key_size} bits; at least {MIN_KEY_SIZE} are needed")
    return key


def _same_key(a: rsa.RSAPublicKey, b: rsa.RSAPublicKey) -> bool:
    return a.public_numbers() == b.public_numbers()


def _sorted_ids(names: Iterable[str]) -> list[str]:
    return sorted(names, key=lambda n: (n.lower(), n))


def _split_pattern(pattern: str) -> list[str]:
    return [p for p in pattern.split(",") if p] if "," in pattern else [pattern]


Matches = dict[str, list[str]]


class KeyStore:
    """Minion keys and the master key pair under ``opts["pki_dir"]``.

    ``fire_events`` (default True): accept/reject/delete fire ``salt/key``
    on the master bus.
    """

    def __init__(self, opts: dict[str, Any], *, fire_events: bool = True) -> None:
        self.opts = opts
        self.pki_dir = os.path.abspath(str(config.setting(opts, "pki_dir", "master")))
        self.fire_events = fire_events
        self.hash_type = str(config.setting(opts, "hash_type"))  # of the fingerprints, as salt-key
        self.disk = FolderTable(self.pki_dir)  # the master's own key pair, and the local keys
        self.table: KeyTable = open_table(opts, self.disk)
        self._parsed: dict[str, rsa.RSAPublicKey] = {}  # key text -> key (parsing is not free)
        self._parsed_lock = threading.Lock()
        self._master_key: rsa.RSAPrivateKey | None = None
        # what any peer holding a key can make an auth decision log: one line a second per kind
        self._pending_log = LogThrottle(log, logging.INFO)
        self._rejected_log = LogThrottle(log, logging.INFO)
        self._denied_log = LogThrottle(log, logging.ERROR)

    @property
    def generation(self) -> int:
        """Grows whenever a listing finds the minion keys changed (:mod:`briny.master.keys.table`)."""
        return int(getattr(self.table, "generation", 0))

    def close(self) -> None:
        """Release the key table's connections (a database's)."""
        self.table.close()

    def ensure_dirs(self) -> None:
        """Create ``pki_dir`` and the four key folders (mode 0700) when missing."""
        self.disk.ensure_dirs()

    def _path(self, folder: str, minion_id: str) -> str:
        """Where a key is, for messages."""
        if folder not in KEY_DIRS:
            raise SaltInvocationError(f"unknown key folder {folder!r}")
        return f"{self.table.where}/{folder}/{check_id(minion_id)}"

    # ----- master key pair -----------------------------------------------------------------
    def ensure_master_keys(self) -> bool:
        """Create ``master.pem``/``master.pub`` when missing; True when something was written."""
        with self.disk.locked():
            pem_path = os.path.join(self.pki_dir, MASTER_PEM)
            pub_path = os.path.join(self.pki_dir, MASTER_PUB)
            wrote = False
            if not os.path.isfile(pem_path):
                key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_SIZE)
                write_atomic(
                    pem_path,
                    key.private_bytes(
                        serialization.Encoding.PEM,
                        serialization.PrivateFormat.TraditionalOpenSSL,
                        serialization.NoEncryption(),
                    ),
                    0o600,
                    fsync=True,
                )
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(pub_path)  # a stale public half of another key
                log.info("generated the master key pair in %s", self.pki_dir)
                wrote = True
            if not os.path.isfile(pub_path):
                key = self.master_key(reload=True)
                write_atomic(
                    pub_path,
                    key.public_key().public_bytes(
                        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
                    ),
                    0o644,
                    fsync=True,
                )
                wrote = True
            if wrote:
                self._master_key = None
            return wrote

    def master_key(self, reload: bool = False) -> rsa.RSAPrivateKey:
        """The master's private key (loaded once)."""
        if self._master_key is None or reload:
            with open(os.path.join(self.pki_dir, MASTER_PEM), "rb") as fh:
                key = serialization.load_pem_private_key(fh.read(), password=None)
            if not isinstance(key, rsa.RSAPrivateKey):
                raise SaltInvocationError(f"{MASTER_PEM} is not an RSA private key")
            self._master_key = key
        return self._master_key

    def master_public_pem(self) -> str:
        """The text of ``master.pub`` (creates the key pair when missing)."""
        path = os.path.join(self.pki_dir, MASTER_PUB)
        if not os.path.isfile(path):
            self.ensure_master_keys()
        text = self.disk.read(path)
        if text is None:
            raise SaltInvocationError(f"cannot read {path}")
        return text

    def local_keys(self) -> list[str]:
        """``*.pem`` / ``*.pub`` files in ``pki_dir`` itself (Salt's "Local Keys")."""
        try:
            names = os.listdir(self.pki_dir)
        except FileNotFoundError:
            return []
        return sorted(
            n for n in names if n.endswith((".pem", ".pub")) and os.path.isfile(os.path.join(self.pki_dir, n))
        )

    # ----- queries -------------------------------------------------------------------------
    def status(self, minion_id: str) -> str | None:
        """``accepted``/``pending``/``rejected``/``denied`` or None; rejected wins, as in auth.

        Exact (the table is asked now, never a listing) and cheap on every auth.
        """
        return _status(self.table.states_of(check_id(minion_id)))

    def public_key(self, minion_id: str, folder: str = ACC) -> str | None:
        """The PEM text of a minion's key in ``folder`` (accepted by default), or None."""
        return self.table.text(folder, check_id(minion_id))

    def public_key_obj(self, minion_id: str, folder: str = ACC) -> rsa.RSAPublicKey | None:
        """The parsed key (cached with its text), or None when absent or unusable."""
        text = self.public_key(minion_id, folder)
        if text is None:
            return None
        with self._parsed_lock:
            key = self._parsed.get(text)
        if key is None:
            try:
                key = load_public_pem(text)
            except SaltInvocationError as exc:
                log.error("the key %s is unusable: %s", self._path(folder, minion_id), exc)
                return None
            with self._parsed_lock:
                if len(self._parsed) > 100_000:
                    self._parsed.clear()
                self._parsed[text] = key
        return key

    def folders(self) -> tuple[int, dict[str, frozenset[str]]]:
        """(:attr:`generation`, the ids in each key folder, unsorted), consistent with each other:
        cheap while nothing changed (the table's listings are cached); every listing that finds
        the table changed raises the generation."""
        return self.table.folders()

    def _names(self, folder: str) -> frozenset[str]:
        return self.table.names(folder)

    def accepted_ids(self) -> list[str]:
        """Accepted ids (sorted); cheap: the table's listing is cached until it changes."""
        return _sorted_ids(self._names(ACC))

    def list_keys(self) -> dict[str, list[str]]:
        """``{"minions": [...], "minions_pre": [...], "minions_rejected": [...], "minions_denied": [...]}``.

        Sorted ignoring case, as salt-key sorts.
        """
        return {folder: _sorted_ids(self._names(folder)) for folder in KEY_DIRS}

    def list_status(self, status: str) -> dict[str, list[str]]:
        """One folder's listing as salt-key ``-l`` takes it (``acc``, ``pre``/``un``, ``rej``, ``den``)."""
        for prefix, folder in (("acc", ACC), ("pre", PEND), ("un", PEND), ("rej", REJ), ("den", DEN)):
            if status.startswith(prefix):
                return {folder: _sorted_ids(self._names(folder))}
        if status.startswith("all"):
            return self.list_keys()
        raise SaltInvocationError(f"'{status}' is not a valid argument to '--list'")

    def name_match(self, pattern: str, *, include_local: bool = False) -> Matches:
        """``{folder: [ids]}`` of the keys a salt-key glob (or comma list of globs) matches."""
        globs = _split_pattern(pattern)
        found: Matches = {}
        listing: dict[str, Iterable[str]] = {f: self._names(f) for f in KEY_DIRS}
        if include_local:
            listing[LOCAL] = self.local_keys()
        for folder, names in listing.items():
            hits = _sorted_ids(n for n in names if any(fnmatch.fnmatch(n, g) for g in globs))
            if hits:
                found[folder] = hits
        return found

    def fingerprint(self, minion_id: str, folder: str | None = None) -> str | None:
        """Salt's fingerprint (with the config's ``hash_type``) of a minion's key (in ``folder``,
        or where ``status`` finds it)."""
        if folder is None:
            status = self.status(minion_id)
            if status is None:
                return None
            folder = FOLDER_OF[status]
        text = self.table.text(folder, minion_id)
        return crypto.fingerprint(text, self.hash_type) if text is not None else None

    def fingerprints(self, pattern: str = "*") -> dict[str, dict[str, str]]:
        """``{folder: {id: finger}}`` for the keys matching ``pattern``, with ``local`` as salt-key -f."""
        out: dict[str, dict[str, str]] = {}
        for folder, ids in self.name_match(pattern, include_local=True).items():
            for name in ids:
                text = (
                    self.disk.read(os.path.join(self.pki_dir, name))
                    if folder == LOCAL
                    else self.table.text(folder, name)
                )
                if text is not None:
                    out.setdefault(folder, {})[name] = crypto.fingerprint(text, self.hash_type)
        return out

    def key_strings(self, pattern: str = "*") -> dict[str, dict[str, str]]:
        """``{folder: {id: pem}}`` for the keys matching ``pattern`` (salt-key -p/-P)."""
        out: dict[str, dict[str, str]] = {}
        for folder, ids in self.name_match(pattern).items():
            for name in ids:
                text = self.table.text(folder, name)
                if text is not None:
                    out.setdefault(folder, {})[name] = text
        return out

    # ----- the auth decision ---------------------------------------------------------------
    def authorize(self, minion_id: str, pub_pem: str | bytes, auto_accept: bool | None = None) -> AuthDecision:
        """Decide an auth request as Salt does (see the module docstring) and record its key.

        Raises SaltInvocationError for an invalid id or a key that does not
        parse; nothing is written then. ``auto_accept`` defaults to
        ``opts["auto_accept"]``.
        """
        check_id(minion_id)
        offered = load_public_pem(pub_pem)
        text = pub_pem.decode("utf-8") if isinstance(pub_pem, bytes) else pub_pem
        if auto_accept is None:
            auto_accept = bool(config.setting(self.opts, "auto_accept"))
        event: dict[str, Any] = {"id": minion_id, "pub": text}
        if self._accepted_as(minion_id, offered):  # the common case, read without the change lock
            return AuthDecision("accepted", [], {"result": True, "act": "accept", **event})
        with self.table.locked():
            held = self.table.states_of(minion_id)

            def has(folder: str) -> bool:
                return folder in held

            if has(REJ):
                self._rejected_log.note("public key rejected for %s: it is in %s", minion_id, REJ)
                return AuthDecision("rejected", [], {"result": False, **event})
            if has(ACC):
                stored = self.public_key_obj(minion_id, ACC)
                if stored is not None and _same_key(stored, offered):
                    return AuthDecision("accepted", [], {"result": True, "act": "accept", **event})
                return self._deny(minion_id, text, ACC, event)
            if not has(PEND):
                dst = ACC if auto_accept else PEND
                self.table.write(dst, minion_id, text)
                if auto_accept:
                    log.info("new public key for %s accepted (auto_accept)", minion_id)
                    return AuthDecision(
                        "accepted",
                        [KeyChange(minion_id, "accept", None, ACC)],
                        {"result": True, "act": "accept", **event},
                    )
                self._pending_log.note("new public key for %s placed in pending", minion_id)
                return AuthDecision(
                    "pending", [KeyChange(minion_id, "pend", None, PEND)], {"result": True, "act": "pend", **event}
                )
            stored = self.public_key_obj(minion_id, PEND)
            if stored is None or not _same_key(stored, offered):
                return self._deny(minion_id, text, PEND, event)
            if auto_accept:
                self.table.move(PEND, ACC, minion_id)
                return AuthDecision(
                    "accepted", [KeyChange(minion_id, "accept", PEND, ACC)], {"result": True, "act": "accept", **event}
                )
            self._pending_log.note("the key of %s is pending; accept it with briny-key -a %s", minion_id, minion_id)
            return AuthDecision("pending", [], {"result": True, "act": "pend", **event})

    def _accepted_as(self, minion_id: str, offered: rsa.RSAPublicKey) -> bool:
        """Whether ``offered`` is the accepted key of a minion not also rejected: such an auth changes
        nothing, so it needs no lock (and a key table whose database is away answers it from its
        last reads)."""
        held = self.table.states_of(minion_id)
        if ACC not in held or REJ in held:
            return False
        stored = self.public_key_obj(minion_id, ACC)
        return stored is not None and _same_key(stored, offered)

    def _deny(self, minion_id: str, text: str, where: str, event: dict[str, Any]) -> AuthDecision:
        self._denied_log.note(
            "authentication attempt from %s failed: the offered key does not match the key "
            "in %s; it is kept in %s. This may be an attempt to compromise the master.",
            minion_id,
            where,
            DEN,
        )
        self.table.write(DEN, minion_id, text)
        return AuthDecision(
            "denied", [KeyChange(minion_id, "denied", None, DEN)], {"result": False, "act": "denied", **event}
        )

    def register(self, minion_id: str, pub_pem: str | bytes, auto_accept: bool = False) -> str:
        """The status an auth request gets (``authorize(...).status``)."""
        return self.authorize(minion_id, pub_pem, auto_accept).status

    # ----- operator operations -------------------------------------------------------------
    def _resolve(self, target: str | Matches) -> Matches:
        if isinstance(target, dict):
            return {folder: [check_id(i) for i in ids] for folder, ids in target.items() if folder in KEY_DIRS}
        return self.name_match(target)

    def _move(
        self, target: str | Matches, sources: Iterable[str], dst: str, act: str, validate: bool = False
    ) -> list[KeyChange]:
        changes: list[KeyChange] = []
        with self.table.locked():
            matches = self._resolve(target)
            for src in sources:
                for minion_id in matches.get(src, []):
                    if validate and self.public_key_obj(minion_id, src) is None:
                        log.error("not accepting the invalid key of %s in %s", minion_id, src)
                        continue
                    if not self.table.move(src, dst, minion_id):
                        continue  # gone meanwhile
                    changes.append(KeyChange(minion_id, act, src, dst))
        self._announce(changes)
        return changes

    def accept(
        self, pattern: str | Matches, include_rejected: bool = False, include_denied: bool = False
    ) -> list[KeyChange]:
        """Move matching pending keys (and rejected/denied ones when asked) to ``minions``."""
        sources = [PEND] + ([REJ] if include_rejected else []) + ([DEN] if include_denied else [])
        return self._move(pattern, sources, ACC, "accept", validate=True)

    def accept_all(self) -> list[KeyChange]:
        return self.accept("*")

    def reject(
        self, pattern: str | Matches, include_accepted: bool = False, include_denied: bool = False
    ) -> list[KeyChange]:
        """Move matching pending keys (and accepted/denied ones when asked) to ``minions_rejected``."""
        sources = [PEND] + ([ACC] if include_accepted else []) + ([DEN] if include_denied else [])
        return self._move(pattern, sources, REJ, "reject")

    def reject_all(self) -> list[KeyChange]:
        return self.reject("*")

    def delete(self, pattern: str | Matches) -> list[KeyChange]:
        """Remove every matching key file, in every folder."""
        changes: list[KeyChange] = []
        with self.table.locked():
            matches = self._resolve(pattern)
            for folder in KEY_DIRS:
                for minion_id in matches.get(folder, []):
                    if not self.table.remove(folder, minion_id):
                        continue
                    changes.append(KeyChange(minion_id, "delete", folder, None))
        self._announce(changes)
        return changes

    def delete_all(self) -> list[KeyChange]:
        return self.delete("*")

    def _announce(self, changes: list[KeyChange]) -> None:
        if not self.fire_events or not changes:
            return
        from briny.common.event import fire_event  # zmq only when something changed

        for change in changes:
            try:
                fire_event(self.opts, "salt/key", change.event_data(), name="master")
            except (OSError, ValueError) as exc:
                log.warning("salt/key event for %s not sent: %s", change.id, exc)


def _status(held: Iterable[str]) -> str | None:
    found = set(held)
    for folder in (REJ, ACC, PEND, DEN):
        if folder in found:
            return STATUS_OF[folder]
    return None


def open_table(opts: dict[str, Any], disk: FolderTable) -> KeyTable:
    """The key table ``key_store`` names: ``files`` (the folders under ``pki_dir``) or ``postgres``."""
    kind = str(config.setting(opts, "key_store", "master")).lower()
    if kind in ("files", "file", "folders"):
        return disk
    if kind in ("postgres", "postgresql", "pgsql"):
        from briny.master.keys.pg import open_pg_table

        return open_pg_table(opts, disk)
    raise ConfigError(f"key_store: unknown backend {kind!r} (briny has 'files' and 'postgres')")
