"""Decoding msgpack from another process, within limits.

Runs wherever bytes arrive from another process: the wire envelope and the
sealed bodies (:mod:`briny.common.wire`, master and minions), the event
buses (:mod:`briny.common.event`) and the local IPC
(:mod:`briny.common.localipc`). Nothing here imports more than msgpack, so
the event bus stays cheap to import.

msgpack builds what the bytes describe: one byte per empty map, ~64 bytes of
Python each, so an unchecked 8 MiB frame of empty maps costs ~600 MiB.
Two decoders bound that:

- :func:`unpack_flat` for what comes before any trust (the envelope, clear
  payloads): a map of a few scalar fields read one by one; a nested array or
  map is refused at its header, before anything is built;
- :func:`unpack` with :class:`Limits` for the rest (sealed bodies, local
  messages): the longest string, binary, array and map are capped, and the
  frame size (:data:`MAX_FRAME`, also the sockets' ``MAXMSGSIZE``) bounds
  the total.

Both raise :class:`~briny.common.exceptions.WireError` for anything that does
not parse or breaks a limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgpack

from .exceptions import WireError

MAX_FRAME = 64 * 1024 * 1024  # the largest frame any socket takes (a sealed req, rep or pub)
MAX_ITEMS = 1 << 22  # entries of one array or map in a body or a local message
_DECODE_ERRORS = (ValueError, TypeError, msgpack.UnpackException)


@dataclass(frozen=True)
class Limits:
    """What one decode may hold: the longest string, binary, array and map (entries)."""

    max_str_len: int
    max_bin_len: int
    max_array_len: int
    max_map_len: int

    def kwargs(self) -> dict[str, int]:
        return {
            "max_str_len": self.max_str_len,
            "max_bin_len": self.max_bin_len,
            "max_array_len": self.max_array_len,
            "max_map_len": self.max_map_len,
            "max_ext_len": 0,
        }


BODY_LIMITS = Limits(MAX_FRAME, MAX_FRAME, MAX_ITEMS, MAX_ITEMS)


def unpack(data: bytes, limits: Limits = BODY_LIMITS) -> Any:
    """Decode msgpack within ``limits``; WireError when it does not parse or breaks one."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False, **limits.kwargs())
    except _DECODE_ERRORS as exc:
        raise WireError(f"body does not parse: {type(exc).__name__}: {str(exc)[:80]}") from None


def unpack_flat(data: bytes, max_len: int, max_fields: int) -> dict[str, Any]:
    """A map of at most ``max_fields`` string keys whose values are scalars (str, bytes, numbers,
    bool, nil; strings and binaries up to ``max_len`` bytes). WireError otherwise."""
    if len(data) > MAX_FRAME + 1024:
        raise WireError(f"{len(data)} bytes is over the {MAX_FRAME} byte limit")
    unpacker = msgpack.Unpacker(
        raw=False,
        max_buffer_size=max(1, len(data)),
        max_str_len=max_len,
        max_bin_len=max_len,
        max_array_len=0,
        max_map_len=0,
        max_ext_len=0,
    )
    try:
        unpacker.feed(data)
        count = unpacker.read_map_header()
        if count > max_fields:
            raise WireError(f"a map of {count} fields (at most {max_fields})")
        out: dict[str, Any] = {}
        for _ in range(count):
            key = unpacker.unpack()
            value = unpacker.unpack()
            if not isinstance(key, str):
                raise WireError("field names must be strings")
            if isinstance(value, (list, dict)):
                raise WireError(f"field {key[:40]!r} is not a scalar")
            out[key] = value
        if unpacker.tell() != len(data):
            raise WireError("trailing bytes after the map")
    except WireError:
        raise
    except _DECODE_ERRORS as exc:
        raise WireError(f"does not parse as a flat map: {type(exc).__name__}: {str(exc)[:80]}") from None
    return out
