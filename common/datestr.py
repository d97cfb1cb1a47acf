"""Date strings of the schedule's ``when``, ``after``, ``until``, ``range`` and ``skip_during_range``.

Salt reads them with ``dateutil.parser``; briny reads the forms Salt's docs and users write, with
the standard library only. :func:`parse` gives a :class:`DateSpec`, or a
:class:`~briny.common.exceptions.ConfigError` naming the string and the forms accepted:

- ISO 8601 (``2026-11-24T17:00:00``, ``2026-11-24 17:00``, ``2026-11-24``, with an offset or ``Z``:
  converted to local time): that moment;
- ``MM/DD/YYYY`` (dateutil's month-first order), optionally followed by a time;
- a time of day: ``5:00pm``, ``5pm``, ``5:00 PM``, ``17:00``, ``17:00:30``: that time today;
- a day name and a time, either order (``Monday 5:00pm``, ``mon 17:00``, ``5pm Friday``), or a day
  name alone (midnight): that day this week, today included, as dateutil reads it.

Refused (dateutil reads them, briny does not): month names (``Nov 24``), relative words
(``tomorrow``, ``noon``), a bare number (``5``), day-first dates (``24/11/2026``).

A spec without a date repeats: :meth:`DateSpec.next_at_or_after` gives its next occurrence, so
``when: 5:00pm`` runs every day at 17:00 and ``when: Monday 5:00pm`` every Monday, as Salt's does
(dateutil reads the string afresh each day). Pure: data in, data out; naive local datetimes.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from briny.common.exceptions import ConfigError

DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_TIME = re.compile(r"(?P<h>\d{1,2})(?::(?P<m>\d{2}))?(?::(?P<s>\d{2}))?\s*(?P<ampm>[ap])?\.?(?:m\.?)?", re.I)
_US_DATE = re.compile(r"(?P<mo>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})(?:\s+(?P<rest>.+))?")
FORMS = "ISO 8601 (2026-11-24T17:00), MM/DD/YYYY [time], a time (5:00pm, 17:00), or a day and a time (Monday 5:00pm)"


@dataclass(frozen=True)
class DateSpec:
    """A parsed date string: a fixed moment (``at``), or a time of day on every day or one weekday."""

    text: str
    at: dt.datetime | None = None  # a fixed moment
    time: dt.time | None = None  # a time of day (with ``weekday`` or every day)
    weekday: int | None = None  # 0 = Monday

    def on(self, now: dt.datetime) -> dt.datetime:
        """The moment this spec names, read on ``now``'s day (as dateutil reads it with today as
        the default): a fixed moment as is; a time today; a day name this week, today included."""
        if self.at is not None:
            return self.at
        moment = dt.datetime.combine(now.date(), self.time or dt.time())
        if self.weekday is not None:
            moment += dt.timedelta(days=(self.weekday - now.weekday()) % 7)
        return moment

    def next_at_or_after(self, now: dt.datetime) -> dt.datetime | None:
        """The first moment of this spec at or after ``now`` (None: a fixed moment now past)."""
        moment = self.on(now)
        if moment >= now:
            return moment
        if self.at is not None:
            return None
        return moment + dt.timedelta(days=1 if self.weekday is None else 7)


def _time(text: str) -> dt.time | None:
    match = _TIME.fullmatch(text.strip())
    if match is None:
        return None
    hour, minute, second = int(match["h"]), int(match["m"] or 0), int(match["s"] or 0)
    ampm = (match["ampm"] or "").lower()
    if not ampm and match["m"] is None:
        return None  # a bare number: dateutil reads it as a day of the month; briny refuses
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm == "p" else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    return dt.time(hour, minute, second)


def _weekday(word: str) -> int | None:
    word = word.lower().rstrip(".,")
    if len(word) < 3:
        return None
    for index, name in enumerate(DAY_NAMES):
        if name.startswith(word):
            return index
    return None


def parse(text: object) -> DateSpec:
    """``text`` read as a date string (see the module docstring); ConfigError when briny cannot."""
    if isinstance(text, dt.datetime):
        return DateSpec(str(text), at=text.replace(tzinfo=None) if text.tzinfo is None else _local(text))
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{text!r} is not a date string; give {FORMS}")
    spec = text.strip()
    try:
        moment = dt.datetime.fromisoformat(spec.replace("Z", "+00:00") if spec.endswith("Z") else spec)
    except ValueError:
        pass
    else:
        return DateSpec(spec, at=_local(moment))
    us = _US_DATE.fullmatch(spec)
    if us is not None:
        try:
            day = dt.date(int(us["y"]), int(us["mo"]), int(us["d"]))
        except ValueError:
            raise ConfigError(f"{spec!r} is not a valid date (MM/DD/YYYY)") from None
        clock = _time(us["rest"]) if us["rest"] else dt.time()
        if clock is None:
            raise ConfigError(f"{spec!r}: {us['rest']!r} is not a time; give {FORMS}")
        return DateSpec(spec, at=dt.datetime.combine(day, clock))
    clock = _time(spec)
    if clock is not None:
        return DateSpec(spec, time=clock)
    words = spec.split()
    for day_word, rest in ((words[0], words[1:]), (words[-1], words[:-1])):
        weekday = _weekday(day_word)
        if weekday is None:
            continue
        clock = _time(" ".join(rest)) if rest else dt.time()
        if clock is not None:
            return DateSpec(spec, time=clock, weekday=weekday)
    raise ConfigError(f"{spec!r} is not a date string briny reads; give {FORMS}")


def _local(moment: dt.datetime) -> dt.datetime:
    """A naive local datetime: an aware one converted to local time, a naive one as is."""
    if moment.tzinfo is None:
        return moment
    return moment.astimezone().replace(tzinfo=None)


def fmt(moment: dt.datetime) -> str:
    """Salt's default time format (``%Y-%m-%dT%H:%M:%S``)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S")
