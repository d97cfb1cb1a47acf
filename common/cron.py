"""Cron expressions for the schedule's ``cron:`` option (Salt uses croniter; briny parses its own).

:func:`parse` checks an expression and gives a :class:`Cron`; :meth:`Cron.next_after` is the first
time strictly after a given local time that matches. Pure: data in, data out.

Accepted (croniter's common forms): five fields ``minute hour day-of-month month day-of-week``, or
six with a trailing ``second`` field; in each field ``*``, a number, a range ``a-b``, a step
``*/n`` or ``a-b/n`` or ``a/n``, and comma lists of those; month names ``jan``..``dec`` and day
names ``sun``..``sat`` (any case); day-of-week 0-7 (0 and 7: Sunday); the macros ``@yearly``
(``@annually``), ``@monthly``, ``@weekly``, ``@daily`` (``@midnight``) and ``@hourly``. When both
day-of-month and day-of-week are restricted, a day matching either runs (as cron and croniter).
Refused, with a :class:`~briny.common.exceptions.ConfigError` naming the problem: croniter's
extensions ``L``, ``W``, ``#`` and ``?``, ``@reboot``, and any value out of its field's range.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from briny.common.exceptions import ConfigError

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
MONTHS = {n: i + 1 for i, n in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split())}
DAYS = {n: i for i, n in enumerate("sun mon tue wed thu fri sat".split())}
# (name, lowest, highest, names) per field, in the order of the expression
FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, MONTHS),
    ("day of week", 0, 7, DAYS),
    ("second", 0, 59, {}),
)
SEARCH_YEARS = 8  # a date that matches none in this many years (Feb 30) never comes


@dataclass(frozen=True)
class Cron:
    """A checked cron expression: the values each field allows."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    seconds: frozenset[int]
    any_day: bool  # day of month is '*'
    any_weekday: bool  # day of week is '*'

    def day_matches(self, day: dt.date) -> bool:
        in_month = day.day in self.days
        in_week = (day.weekday() + 1) % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week

    def next_after(self, when: dt.datetime) -> dt.datetime | None:
        """The first matching time strictly after ``when`` (naive local time), None when there is
        none within :data:`SEARCH_YEARS` years."""
        t = when.replace(microsecond=0) + dt.timedelta(seconds=1)
        limit = when + dt.timedelta(days=366 * SEARCH_YEARS)
        while t <= limit:
            if t.month not in self.months:
                t = (t.replace(day=1) + dt.timedelta(days=32)).replace(day=1, hour=0, minute=0, second=0)
            elif not self.day_matches(t.date()):
                t = t.replace(hour=0, minute=0, second=0) + dt.timedelta(days=1)
            elif t.hour not in self.hours:
                t = _next_in(t.replace(minute=0, second=0), t.hour, self.hours, 3600, dt.timedelta(days=1))
            elif t.minute not in self.minutes:
                t = _next_in(t.replace(second=0), t.minute, self.minutes, 60, dt.timedelta(hours=1))
            elif t.second not in self.seconds:
                t = _next_in(t, t.second, self.seconds, 1, dt.timedelta(minutes=1))
            else:
                return t
        return None


def _next_in(floor: dt.datetime, current: int, allowed: frozenset[int], unit: int, carry: dt.timedelta) -> dt.datetime:
    """The next allowed value of one field: ``floor`` (the time cut at that field, whose value is
    ``current``, each step ``unit`` seconds) moved to it, or to the start of the next span
    (``carry`` after the span's start) when none is left in this one."""
    later = [v for v in allowed if v > current]
    if later:
        return floor + dt.timedelta(seconds=(min(later) - current) * unit)
    return floor - dt.timedelta(seconds=current * unit) + carry


def _value(text: str, field: str, low: int, high: int, names: dict[str, int], expr: str) -> int:
    word = text.lower()
    if word in names:
        return names[word]
    if not word.isdigit():
        marks = [mark for mark in ("L", "W", "#", "?") if mark in text.upper()]
        if marks:
            raise ConfigError(f"cron {expr!r}: croniter's extension {marks[0]!r} is not supported by briny")
        raise ConfigError(f"cron {expr!r}: {text!r} is not a valid {field} value")
    number = int(word)
    if not low <= number <= high:
        raise ConfigError(f"cron {expr!r}: {field} {number} is out of range {low}-{high}")
    return number


def _field(text: str, index: int, expr: str) -> frozenset[int]:
    field, low, high, names = FIELDS[index]
    values: set[int] = set()
    for part in text.split(","):
        base, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise ConfigError(
                    f"cron {expr!r}: the step {step_text!r} in the {field} field must be a whole number above 0"
                )
            step = int(step_text)
        if base == "*":
            first, last = low, high
        elif "-" in base:
            a, _, b = base.partition("-")
            first, last = _value(a, field, low, high, names, expr), _value(b, field, low, high, names, expr)
            if last < first:
                raise ConfigError(f"cron {expr!r}: the {field} range {base!r} ends before it starts")
        elif base:
            first = _value(base, field, low, high, names, expr)
            last = high if step_text else first
        else:
            raise ConfigError(f"cron {expr!r}: an empty item in the {field} field")
        values.update(range(first, last + 1, step))
    if index == 4 and 7 in values:  # 7 is Sunday too
        values.discard(7)
        values.add(0)
    return frozenset(values)


def parse(text: object) -> Cron:
    """``text`` checked (see the module docstring); ConfigError saying what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"cron must be a cron expression such as '*/5 * * * *', not {text!r}")
    expr = text.strip()
    spec = MACROS.get(expr.lower(), expr)
    if spec.startswith("@"):
        raise ConfigError(f"cron {expr!r}: briny knows the macros {', '.join(sorted(MACROS))}")
    parts = spec.split()
    if len(parts) not in (5, 6):
        raise ConfigError(
            f"cron {expr!r} has {len(parts)} fields; give 5 (minute hour day month weekday) or 6 (and seconds)"
        )
    sets = [_field(part, i, expr) for i, part in enumerate(parts)]
    seconds = sets[5] if len(sets) == 6 else frozenset({0})
    return Cron(expr, sets[0], sets[1], sets[2], sets[3], sets[4], seconds, parts[2] == "*", parts[4] == "*")
