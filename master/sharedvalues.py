"""Equal values of many minions' maps kept once in the master's memory (issue 13).

A master of thousands of minions keeps each one's grains (about 20 KB each
here), and most of them are the same from one minion to the next (``os``,
``cpu_flags``, ``kernelparams``, ``path``, ...). :class:`SharedValues` gives
each top-level value of such a map the one object already kept for an equal
value under the same key, counted, and forgets it when the last map that used
it is released: memory grows with the distinct values, not with the minions.

Equality is the value's msgpack form (type-exact: ``1`` and ``True``, ``[1]``
and ``(1,)`` pack apart where it matters), compared through a 16-byte BLAKE2b
digest of key and form. A value that cannot be packed is kept as it is, not
shared.

The objects handed out are shared between minions: nobody may change them in
place (the grains cache already promises its readers that a minion's grains
are replaced whole, never changed; the compiler and the pillar deep-copy what
they render with).

Threads: one owner (the grains cache calls it on the loop, and from
``load_all`` before the loop serves); not thread-safe.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from typing import Any

import msgpack


def _digest(key: str, value: Any) -> bytes | None:
    try:
        form = msgpack.packb(value, use_bin_type=True, strict_types=True)
    except (TypeError, ValueError, OverflowError):
        return None
    hasher = hashlib.blake2b(key.encode("utf-8", "surrogateescape"), digest_size=16)
    hasher.update(b"\0")
    hasher.update(form)
    return hasher.digest()


class SharedValues:
    """Top-level values of maps, each distinct (key, value) kept once, counted (see the module
    docstring)."""

    def __init__(self) -> None:
        self._table: dict[bytes, list[Any]] = {}  # digest -> [the value, how many maps use it]

    def __len__(self) -> int:
        """How many distinct values are kept."""
        return len(self._table)

    def share(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``data`` whose values are the ones kept for equal values (counted once more
        each); pair every call with a :meth:`release` of what it returned."""
        out: dict[str, Any] = {}
        for key, value in data.items():
            if not isinstance(key, str):
                out[key] = value
                continue
            key = sys.intern(key)
            digest = _digest(key, value)
            if digest is None:
                out[key] = value
                continue
            entry = self._table.get(digest)
            if entry is None:
                self._table[digest] = [value, 1]
            else:
                entry[1] += 1
                value = entry[0]
            out[key] = value
        return out

    def release(self, data: Mapping[str, Any]) -> None:
        """``data`` (what :meth:`share` returned) is no longer kept: a value no map uses goes."""
        for key, value in data.items():
            if not isinstance(key, str):
                continue
            digest = _digest(key, value)
            if digest is None:
                continue
            entry = self._table.get(digest)
            if entry is None or entry[0] is not value:  # not a value this table handed out
                continue
            entry[1] -= 1
            if entry[1] <= 0:
                del self._table[digest]
