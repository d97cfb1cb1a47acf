"""ANSI colour table shared by the outputters (runs in every CLI that prints).

The escape sequences are the ones Salt 3007 prints (``ESC[0;32m`` for green,
``ESC[0;1;33m`` for light yellow, ``ESC[0;0m`` to reset), observed on the
reference installation. With colour off every entry is the empty string, so
formatting code can always interpolate the table.
"""

from __future__ import annotations

_ESC = "\x1b["

_CODES: dict[str, str] = {
    "BLACK": "0;30",
    "DARK_GRAY": "0;1;30",
    "RED": "0;31",
    "LIGHT_RED": "0;1;31",
    "GREEN": "0;32",
    "LIGHT_GREEN": "0;1;32",
    "YELLOW": "0;33",
    "LIGHT_YELLOW": "0;1;33",
    "BLUE": "0;34",
    "LIGHT_BLUE": "0;1;34",
    "MAGENTA": "0;35",
    "LIGHT_MAGENTA": "0;1;35",
    "CYAN": "0;36",
    "LIGHT_CYAN": "0;1;36",
    "LIGHT_GRAY": "0;37",
    "WHITE": "0;1;37",
    "DEFAULT_COLOR": "0;39",
    "ENDC": "0;0",
}

COLORS_ON: dict[str, str] = {name: f"{_ESC}{code}m" for name, code in _CODES.items()}
COLORS_OFF: dict[str, str] = {name: "" for name in _CODES}


def get_colors(enabled: bool) -> dict[str, str]:
    """The colour table: real escapes when ``enabled``, empty strings otherwise."""
    return COLORS_ON if enabled else COLORS_OFF
