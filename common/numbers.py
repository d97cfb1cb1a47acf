"""Numbers from untrusted or loosely typed values: requests, events, command lines.

Runs everywhere a number arrives from outside the code that uses it: a
request's ``timeout``, an event's counters, a chunk ``offset``, a CLI
option. One rule for all of them: a number is an ``int`` or a ``float``
but never a ``bool`` (``True`` is not a timeout of one second), and a value
that does not fit the range asked for gives the caller's default instead of
an exception, so bad input falls back, never crashes a daemon.

Config values have their own typed access (with the defaults in one place);
this module is for everything else, and that access may use it.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

D = TypeVar("D")


def is_number(value: Any) -> bool:
    """An int or a finite float, not a bool."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def positive(value: Any, default: D) -> float | D:
    """``value`` as a float when it is a number above 0 (a timeout, an interval), else ``default``."""
    return float(value) if is_number(value) and value > 0 else default


def non_negative(value: Any, default: D) -> float | D:
    """``value`` as a float when it is a number of 0 or more, else ``default``."""
    return float(value) if is_number(value) and value >= 0 else default


def whole(value: Any, default: D, minimum: int = 0, maximum: int | None = None) -> int | D:
    """``value`` when it is an int (not a bool) from ``minimum`` to ``maximum``, else ``default``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    if value < minimum or (maximum is not None and value > maximum):
        return default
    return value
