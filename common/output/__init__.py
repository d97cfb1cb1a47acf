"""Outputters: turn a return into the text Salt 3007 prints for it.

Runs in every CLI that prints results (``briny-call``, ``briny``,
``briny-run``, ``briny-key``). One entry point, ``render_output``; the
outputters themselves live in ``highstate.py``, ``nested.py`` and
``structured.py`` (json, yaml, pprint, raw, txt, quiet), the colour table in
``colors.py``.

The returned text has no trailing newline: print it with ``print()``, as Salt
prints its outputters' text, and print nothing else for ``quiet``.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

from .colors import get_colors
from ..statefuns import HIGHSTATE_FUNCS
from .highstate import render_highstate
from ..exceptions import FallbackToNested
from .nested import render_nested
from .structured import (
    render_json,
    render_pprint,
    render_quiet,
    render_raw,
    render_txt,
    render_yaml,
)

__all__ = ["render_output", "OUTPUTTERS", "HIGHSTATE_FUNCS", "get_colors"]


# Outputters that colour their text; the rest take only (data, opts).
_COLORED: dict[str, Callable[[Any, dict[str, Any], bool], str]] = {
    "nested": render_nested,
    "highstate": render_highstate,
}
_PLAIN: dict[str, Callable[[Any, dict[str, Any]], str]] = {
    "json": render_json,
    "yaml": render_yaml,
    "pprint": render_pprint,
    "raw": render_raw,
    "txt": render_txt,
    "quiet": render_quiet,
}
OUTPUTTERS: frozenset[str] = frozenset(_COLORED) | frozenset(_PLAIN)


def _stdout_is_tty() -> bool:
    try:
        return os.isatty(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def _want_color(opts: dict[str, Any], color: bool | None) -> bool:
    if color is not None:
        return bool(color)
    if opts.get("force_color"):
        return True
    if opts.get("no_color"):
        return False
    return bool(opts.get("color", True)) and _stdout_is_tty()


def render_output(data: Any, out: str | None, opts: dict[str, Any], *, color: bool | None = None) -> str:
    """Text to print for `data` (the whole return, e.g. {"local": {...}} for briny-call,
    or {minion_id: ret, ...} for the master CLI). `out` is the --out name or None for the
    function's default (the caller passes "highstate" for state functions).
    `opts` carries state_output (full/terse/mixed/changes/full_id/terse_id/mixed_id/changes_id),
    state_verbose (bool), state_output_diff, color, output_indent... `color=None` means
    colour when stdout is a terminal and opts["color"] is true."""
    opts = opts or {}
    name = (out or "nested").lower()
    if name == "text":
        name = "txt"
    if name not in OUTPUTTERS:
        name = "nested"  # Salt falls back to nested for an unknown outputter
    use_color = _want_color(opts, color)
    try:
        if name in _PLAIN:
            return _PLAIN[name](data, opts).rstrip()
        if name == "highstate":
            return render_highstate(data, opts, use_color).rstrip()
    except FallbackToNested:
        pass  # Salt prints what an outputter cannot handle with nested
    return render_nested(data, opts, use_color).rstrip()
