"""Keys and ciphers of the trust model: RSA identities, session keys, signatures.

Runs in the master and minion daemons (and ``briny-key``). Everything is
the ``cryptography`` package; nothing here touches a socket.

- Each minion and the master have an RSA 2048 key pair (PEM files, private
  key mode 0600 in a 0700 folder). A minion proves its identity at auth by
  receiving its session key encrypted to its public key (RSA-OAEP, SHA-256).
- After auth every message is sealed with AES-256-GCM under the minion's
  session key (:func:`seal` / :func:`unseal`, 12-byte random nonces, the
  envelope header as associated data).
- The master signs publishes with an Ed25519 key (fast enough to sign one
  publish per targeted minion); its public half reaches minions inside the
  auth reply, which the master signs with its RSA key (RSA-PSS, SHA-256) so
  a minion that pinned the master's RSA key can trust it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .atomicfile import write_atomic
from .exceptions import AuthError, ConfigError

RSA_BITS = 2048
NONCE_BYTES = 12
SESSION_KEY_BYTES = 32

RSAPrivate = rsa.RSAPrivateKey
RSAPublic = rsa.RSAPublicKey


# -- RSA identities ----------------------------------------------------------


def generate_rsa(bits: int = RSA_BITS) -> RSAPrivate:
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def private_pem(key: RSAPrivate | ed25519.Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def public_pem(key: RSAPrivate | RSAPublic) -> str:
    pub = key.public_key() if isinstance(key, rsa.RSAPrivateKey) else key
    return pub.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii")


def load_public(pem: str | bytes) -> RSAPublic:
    """An RSA public key from PEM, or AuthError when it is not one."""
    data = pem.encode("ascii") if isinstance(pem, str) else pem
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise AuthError(f"not a PEM public key: {exc}") from None
    if not isinstance(key, rsa.RSAPublicKey) or key.key_size < 2048:
        raise AuthError("the public key must be RSA of at least 2048 bits")
    return key


FINGER_HASHES = frozenset({"md5", "sha1", "sha224", "sha256", "sha384", "sha512"})


def fingerprint(pem: str | bytes, hash_type: str = "sha256") -> str:
    """Salt's key fingerprint (``pem_finger``), the one briny uses everywhere.

    What ``salt-key -f``/``-F`` prints and what a minion's ``master_finger``
    is compared with: ``hash_type`` (Salt's ``hash_type`` option, default
    sha256) over the PEM body, i.e. the base64 lines without the BEGIN/END
    lines, each with its ``\\n`` (CRLF read as LF, blank lines skipped), in
    colon-separated lower-case hex. Text that is not PEM is hashed as it is.
    ConfigError for a hash_type briny does not know.
    """
    name = str(hash_type or "sha256").lower()
    if name not in FINGER_HASHES:
        raise ConfigError(f"hash_type {hash_type!r} is not one of {', '.join(sorted(FINGER_HASHES))}")
    data = pem.encode("utf-8") if isinstance(pem, str) else bytes(pem)
    lines = [line for line in data.replace(b"\r\n", b"\n").split(b"\n") if line.strip()]
    if len(lines) >= 2 and lines[0].strip().startswith(b"-----BEGIN") and lines[-1].strip().startswith(b"-----END"):
        data = b"".join(line + b"\n" for line in lines[1:-1])
    digest = hashlib.new(name, data).hexdigest()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def same_fingerprint(wanted: str, finger: str) -> bool:
    """``wanted`` (an operator's ``master_finger``: colons optional, any case) names ``finger``."""

    def norm(text: str) -> str:
        return text.replace(":", "").strip().lower()

    return bool(norm(wanted)) and norm(wanted) == norm(finger)


def write_private(path: Path, data: bytes) -> None:
    """Write a private key: folder 0700, file 0600, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, data, 0o600)


def load_or_create_rsa(priv_path: Path, pub_path: Path, *, check: bool = True) -> RSAPrivate:
    """The key pair at these paths, made on first use. ``check=False`` skips OpenSSL's
    consistency check of a key read back (tens of milliseconds per key): only for keys this
    program made itself and keeps owner-only (``briny-swarm``'s thousands)."""
    if priv_path.exists():
        key = serialization.load_pem_private_key(
            priv_path.read_bytes(), password=None, unsafe_skip_rsa_key_validation=not check
        )
        if not isinstance(key, rsa.RSAPrivateKey):
            raise AuthError(f"{priv_path} does not hold an RSA private key")
    else:
        key = generate_rsa()
        write_private(priv_path, private_pem(key))
    if not pub_path.exists():
        pub_path.write_text(public_pem(key))
    return key


def load_or_create_ed25519(path: Path) -> ed25519.Ed25519PrivateKey:
    if path.exists():
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        if not isinstance(key, ed25519.Ed25519PrivateKey):
            raise AuthError(f"{path} does not hold an Ed25519 private key")
        return key
    key = ed25519.Ed25519PrivateKey.generate()
    write_private(path, private_pem(key))
    return key


def rsa_encrypt(pub: RSAPublic, data: bytes) -> bytes:
    return pub.encrypt(data, padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None))


def rsa_decrypt(priv: RSAPrivate, data: bytes) -> bytes:
    try:
        return priv.decrypt(
            data, padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
        )
    except ValueError:
        raise AuthError("could not decrypt with this key") from None


_PSS = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=padding.PSS.MAX_LENGTH)


def rsa_sign(priv: RSAPrivate, data: bytes) -> bytes:
    return priv.sign(data, _PSS, hashes.SHA256())


def rsa_verify(pub: RSAPublic, signature: bytes, data: bytes) -> bool:
    try:
        pub.verify(signature, data, _PSS, hashes.SHA256())
    except InvalidSignature:
        return False
    return True


# -- publish signatures --------------------------------------------------------


def ed_public_bytes(key: ed25519.Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def ed_sign(key: ed25519.Ed25519PrivateKey, data: bytes) -> bytes:
    return key.sign(data)


def ed_verify(public_raw: bytes, signature: bytes, data: bytes) -> bool:
    try:
        ed25519.Ed25519PublicKey.from_public_bytes(public_raw).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


# -- sealed messages ----------------------------------------------------------


def new_session_key() -> bytes:
    return AESGCM.generate_key(bit_length=SESSION_KEY_BYTES * 8)


def new_nonce() -> bytes:
    return os.urandom(NONCE_BYTES)


def seal(key: bytes, nonce: bytes, plaintext: bytes, aad: bytes) -> bytes:
    return AESGCM(key).encrypt(nonce, plaintext, aad)


def unseal(key: bytes, nonce: bytes, ciphertext: bytes, aad: bytes) -> bytes:
    """The plaintext, or AuthError when the key, nonce, header or body do not match."""
    try:
        return AESGCM(key).decrypt(nonce, ciphertext, aad)
    except (InvalidTag, ValueError):
        raise AuthError("message failed authentication (wrong key, or altered)") from None
