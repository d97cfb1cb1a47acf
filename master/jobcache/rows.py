"""The job cache's rows and how their values are encoded: a return as the ``returns`` table
keeps it, an event as the writer gets it, msgpack for loads, targets and return records (what
msgpack cannot carry becomes a string), JSON text for events (``jsonb`` on PostgreSQL).

Pure data in, data out; used by :mod:`briny.master.jobcache.sql`, its writer
(:mod:`briny.master.jobcache.writer`) and its backends."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgpack


@dataclass(frozen=True)
class ReturnRow:
    """One return as the ``returns`` table keeps it."""

    jid: str
    minion_id: str
    received: float
    success: int | None
    retcode: int | None
    ret: bytes


@dataclass(frozen=True)
class EventRow:
    """One event as the writer gets it from the bus (turned into JSON by the writer)."""

    tag: str
    data: dict[str, Any]
    stamp: float
    master_id: str


def _json_default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def event_json(data: dict[str, Any]) -> str:
    """An event's data as JSON text (bytes as UTF-8 text, what JSON cannot carry as strings)."""
    try:
        return json.dumps(data, default=_json_default, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):  # NaN, infinities, keys JSON cannot have
        return json.dumps(_plain_json(data), default=_json_default, separators=(",", ":"))


def _plain_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: _plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_json(v) for v in value]
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return str(value)
    return value


def _plain(value: Any) -> Any:
    """``value`` with what msgpack cannot carry turned into strings."""
    if isinstance(value, dict):
        return {
            (k if isinstance(k, (str, int, float, bool, bytes)) or k is None else str(k)): _plain(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool, bytes)):
        return value
    return str(value)


def pack(value: Any) -> bytes:
    try:
        return msgpack.packb(value, use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        return msgpack.packb(_plain(value), use_bin_type=True)


def unpack(blob: bytes | memoryview | None) -> Any:
    if blob is None:
        return None
    return msgpack.unpackb(bytes(blob), raw=False, strict_map_key=False)


def int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    return None
