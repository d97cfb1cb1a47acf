"""OpenSSH public keys and ``known_hosts`` lines, as Salt 3007's ``ssh`` module handles them.

Fingerprints are Salt's: the hex digest of the decoded key, two digits per
byte joined by ``:`` (``sha256`` unless another hash is named), not
OpenSSH's ``SHA256:base64``. Lookups and removals in a known_hosts file
are ``ssh-keygen -F`` / ``-R``'s (hashed names, patterns and markers are
theirs); this module reads their output and ``ssh-keyscan``'s, and builds
the lines that are added; ``authorized_keys`` lines (``[options ]enc key[
comment]``) are parsed and written here too.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
from collections.abc import Iterable, Iterator
from typing import Any

from briny.common.exceptions import CommandExecutionError

_LINE = re.compile(r"^(.*?)\s?((?:sk-)?(?:ssh-|ecds)[\w@.-]+\s.+)$")
_ENC_ALIASES = {
    "r": "ssh-rsa",
    "rsa": "ssh-rsa",
    "ssh-rsa": "ssh-rsa",
    "d": "ssh-dss",
    "dsa": "ssh-dss",
    "dss": "ssh-dss",
    "ssh-dss": "ssh-dss",
    "e": "ecdsa-sha2-nistp256",
    "ecdsa": "ecdsa-sha2-nistp256",
    "ed25519": "ssh-ed25519",
    "ssh-ed25519": "ssh-ed25519",
}
_ENC_OTHERS = {
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "rsa-sha2-512",
    "rsa-sha2-256",
    "rsa-sha2-512-cert-v01@openssh.com",
    "rsa-sha2-256-cert-v01@openssh.com",
    "ssh-rsa-cert-v01@openssh.com",
    "ecdsa-sha2-nistp256-cert-v01@openssh.com",
    "ecdsa-sha2-nistp384-cert-v01@openssh.com",
    "ecdsa-sha2-nistp521-cert-v01@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
    "ssh-ed25519-cert-v01@openssh.com",
    "sk-ssh-ed25519@openssh.com",
    "sk-ssh-ed25519-cert-v01@openssh.com",
}
DEFAULT_SSH_PORT = 22
_HASHES = {"md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_224", "sha3_256", "sha3_384", "sha3_512"}
_FOUND = re.compile(r"^# Host .* found: line (\d+)")


def fingerprint(key: str, hash_type: str | None = None) -> str | None:
    """Salt's fingerprint of a base64 key; None when ``key`` is not base64."""
    name = (hash_type or "sha256").lower()
    if name not in _HASHES:
        raise CommandExecutionError(f"The fingerprint_hash_type {name} is not supported.")
    try:
        raw = base64.b64decode(key, validate=True)
    except (binascii.Error, ValueError):
        return None
    digest = hashlib.new(name, raw).hexdigest()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def key_type(key: str) -> str | None:
    """The type a public key blob names for itself (``ssh-ed25519``, ...); None when it is no key."""
    try:
        raw = base64.b64decode(key, validate=True)
        (size,) = struct.unpack(">I", raw[:4])
        name = raw[4 : 4 + size].decode("ascii")
    except (binascii.Error, ValueError, struct.error, UnicodeDecodeError):
        return None
    if not name or len(raw) <= 4 + size or not all(c.isalnum() or c in "-@." for c in name):
        return None
    return name


def parse_openssh_output(lines: Iterable[str], hash_type: str | None = None) -> Iterator[dict[str, str]]:
    """``{hostname, key, enc, fingerprint}`` of each ``host enc key`` line of ssh-keygen -F / ssh-keyscan."""
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3:
            continue
        hostname, enc, key = parts
        found = fingerprint(key, hash_type)
        if found:
            yield {"hostname": hostname, "key": key, "enc": enc, "fingerprint": found}


def matched_line_numbers(lines: list[str], enc: str | None) -> list[int]:
    """The file line numbers ``ssh-keygen -F`` reports, of keys of type ``enc`` (all when None)."""
    out = []
    for i, line in enumerate(lines):
        found = _FOUND.match(line.strip())
        if not found or i + 1 >= len(lines):
            continue
        parts = lines[i + 1].split()
        if enc is None or (len(parts) >= 2 and parts[-2] == enc):
            out.append(int(found.group(1)))
    return out


def ssh_hostname(hostname: str, port: Any = None) -> str:
    """``host`` or ``[host]:port`` as known_hosts writes a host on another port."""
    if not port or str(port) == str(DEFAULT_SSH_PORT):
        return hostname
    return f"[{hostname}]:{port}"


def entry_line(entry: dict[str, Any], port: Any, hashed: bool) -> str:
    """The known_hosts line Salt writes for an entry; an entry written ``[host]:port`` gets its
    ``port`` (Salt's changes show it)."""
    if hashed or port is None or str(port) == str(DEFAULT_SSH_PORT) or ":" in str(entry["hostname"]):
        return f"{entry['hostname']} {entry['enc']} {entry['key']}\n"
    entry["port"] = port
    return f"[{entry['hostname']}]:{port} {entry['enc']} {entry['key']}\n"


def replace_lines(text: str, drop: Iterable[int], new: list[str]) -> str:
    """``text`` without the (1-based) lines ``drop``, with ``new`` appended on lines of their own."""
    gone = set(drop)
    kept = [line for n, line in enumerate(text.splitlines(keepends=True), start=1) if n not in gone]
    if kept and not kept[-1].endswith("\n"):
        kept[-1] += "\n"
    return "".join(kept + new)


# ---------------------------------------------------------------- authorized_keys lines


def refine_enc(enc: str) -> str:
    """The canonical key type for ``enc`` (``rsa`` -> ``ssh-rsa``, ...)."""
    enc = str(enc)
    if enc in _ENC_ALIASES:
        return _ENC_ALIASES[enc]
    if enc in _ENC_OTHERS:
        return enc
    raise CommandExecutionError(f"Incorrect encryption key type '{enc}'.")


def parse_auth_line(line: str) -> dict[str, Any] | None:
    """``{options, enc, key, comment}`` of one authorized_keys line, or None."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    found = _LINE.search(line)
    if not found:
        return None
    parts = found.group(2).split()
    if len(parts) < 2:
        return None
    return {
        "options": found.group(1).split(",") if found.group(1) else [],
        "enc": parts[0],
        "key": parts[1],
        "comment": " ".join(parts[2:]),
    }


def auth_line(key: str, enc: str, comment: str, options: list[str] | None) -> str:
    prefix = ",".join(options) + " " if options else ""
    return f"{prefix}{enc} {key} {comment}\n"
