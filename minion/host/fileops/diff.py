"""Comparing contents: Salt's unified diffs, binary detection, hashes, ``source_hash``.

Runs on the managed host, called by the ``file`` execution module. Diffs
look exactly like Salt's (``difflib`` with empty file names, so they start
``--- \\n+++ \\n``); a binary side gives ``Replace binary file``.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import os
import re
from typing import Any

from briny.common.exceptions import HashError

log = logging.getLogger(__name__)

HASH_LENGTHS = {"md5": 32, "sha1": 40, "sha224": 56, "sha256": 64, "sha384": 96, "sha512": 128}
SUPPORTED = ("sha512", "sha384", "sha256", "sha224", "sha1", "md5")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_HASH_IN_TEXT = re.compile(
    r"(?<![0-9a-fA-F])([0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{56}|"
    r"[0-9a-fA-F]{64}|[0-9a-fA-F]{96}|[0-9a-fA-F]{128})(?![0-9a-fA-F])"
)

INVALID_FORMAT = (
    "Source hash {0} format is invalid. The supported formats are: 1) a hash, 2) an expression in "
    "the format <hash_type>=<hash>, or 3) either a path to a local file containing hashes, or a URI "
    "of a remote hash file. Supported protocols for remote hash files are: salt, file, http, https, "
    "ftp, swift, s3. The hash may also not be of a valid length, the following are supported hash "
    "types and lengths: md5 (32), sha1 (40), sha224 (56), sha256 (64), sha384 (96), sha512 (128)."
)


def is_binary(data: bytes) -> bool:
    """True for contents with a NUL byte or that are not UTF-8."""
    if b"\x00" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def unified(old: str | bytes, new: str | bytes) -> str:
    """Salt's diff of two contents (lines kept with their ends)."""
    if isinstance(old, bytes) or isinstance(new, bytes):
        ob = old if isinstance(old, bytes) else old.encode()
        nb = new if isinstance(new, bytes) else new.encode()
        if is_binary(ob) or is_binary(nb):
            return "Replace binary file"
        old, new = ob.decode(), nb.decode()
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True)))


def hash_bytes(data: bytes, form: str = "sha256") -> str:
    return hashlib.new(form, data).hexdigest()


def hash_file(path: str, form: str = "sha256") -> str:
    digest = hashlib.new(form)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(65536), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _type_for(hexsum: str) -> str | None:
    for form, length in HASH_LENGTHS.items():
        if len(hexsum) == length:
            return form
    return None


def parse_hash(source_hash: str) -> dict[str, str] | None:
    """``{"hash_type", "hsum"}`` for ``TYPE=HEX`` or a bare hex hash; None when it is a path/URL.

    Raises HashError for a ``TYPE=...`` with an unknown type.
    """
    text = str(source_hash).strip()
    if "=" in text and "://" not in text and not text.startswith("/"):
        form, _, hexsum = text.partition("=")
        form = form.strip().lower()
        if form not in HASH_LENGTHS:
            raise HashError(
                f"Invalid hash type '{form}'. Supported hash types are: {', '.join(SUPPORTED)}. "
                f"Either remove the hash type and simply use '{hexsum}' as the source_hash, "
                "or change the hash type to a supported type."
            )
        hexsum = hexsum.strip()
        if not _HEX.match(hexsum) or len(hexsum) != HASH_LENGTHS[form]:
            raise HashError(INVALID_FORMAT.format(source_hash))
        return {"hash_type": form, "hsum": hexsum.lower()}
    if _HEX.match(text):
        guessed = _type_for(text)
        if guessed is None:
            raise HashError(INVALID_FORMAT.format(source_hash))
        return {"hash_type": guessed, "hsum": text.lower()}
    return None


def hash_from_text(
    text: str, source_hash: str, file_name: str | None = None, hash_name: str | None = None
) -> dict[str, str]:
    """Pick the hash for ``file_name`` (or ``hash_name``) out of a hash file's text.

    A line naming the file wins (``HASH  name`` as ``sha256sum`` writes, or
    ``name HASH``); otherwise the file's only hash. Raises HashError.
    """
    wanted = [n for n in (hash_name, file_name) if n]
    only: list[str] = []
    for line in text.splitlines():
        found = _HASH_IN_TEXT.findall(line)
        if not found:
            continue
        only.extend(found)
        rest = _HASH_IN_TEXT.sub(" ", line).replace("*", " ").split()
        for name in wanted:
            if any(r == name or os.path.basename(r) == os.path.basename(name) for r in rest):
                return {"hash_type": _type_for(found[0]) or "sha256", "hsum": found[0].lower()}
    if len(only) == 1:
        return {"hash_type": _type_for(only[0]) or "sha256", "hsum": only[0].lower()}
    raise HashError(INVALID_FORMAT.format(source_hash))


def mismatch(name: str, source_sum: dict[str, str], actual: str) -> str:
    return (
        f"Specified {source_sum['hash_type']} checksum for {name} ({source_sum['hsum']}) "
        f"does not match actual checksum ({actual})"
    )


def dict_diff(old: Any, new: Any) -> dict[str, Any]:
    """Salt's recursive diff of two mappings: per changed key ``{"new", "old"}`` (``<_null_>`` for
    a missing side), nested mappings on both sides diffed key by key in turn."""
    out: dict[str, Any] = {}
    if not isinstance(old, dict) or not isinstance(new, dict):
        return {} if old == new else {"new": new, "old": old}
    for key in list(old) + [k for k in new if k not in old]:
        a = old.get(key, "<_null_>")
        b = new.get(key, "<_null_>")
        if isinstance(a, dict) and isinstance(b, dict):
            sub = dict_diff(a, b)
            if sub:
                out[key] = sub
        elif a != b:
            out[key] = {"new": b, "old": a}
    return out
