"""A short, stable digest of plain data, for caches that must notice when their inputs change.

Runs on the master: the compile cache (a minion's grains, pillar, ``pillar=``
override, exclude list), the pillar cache (a minion's grains) and what a
minion reported of its config. Not a security boundary: blake2b over the
msgpack form, 16 bytes, hex. Equal data gives equal digests (within a
process and across restarts); data msgpack cannot pack (a set, an object)
is digested by its ``repr``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgpack


def data_digest(data: Any) -> str:
    """The hex digest of ``data`` (see the module docstring)."""
    try:
        raw = msgpack.packb(data, use_bin_type=True, default=repr)
    except (TypeError, ValueError, OverflowError):
        raw = repr(data).encode("utf-8", "replace")
    return hashlib.blake2b(raw, digest_size=16).hexdigest()
