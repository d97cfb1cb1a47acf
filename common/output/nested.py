"""The ``nested`` outputter: Salt's default layout for plain (non-state) data.

Runs wherever a CLI prints a return (``briny-call``, ``briny``, ``briny-run``)
and inside the highstate outputter, which draws a state's ``changes`` with it.

Layout, as Salt 3007 prints it:

- a mapping prints ``----------`` (unless it sits at column 0), then each key
  as ``key:`` with its value four columns further in; keys are sorted (by
  their text when they do not compare), ordered mappings keep their order;
- a list prints each scalar item as ``- item``; a nested list or mapping
  item prints ``|_`` and the item two columns further in;
- strings print line by line (an empty string prints nothing); ``None``,
  booleans and numbers print in light yellow, strings in green, keys and
  separators in cyan; values of other types (sets, objects) print nothing.
"""

from __future__ import annotations

import numbers
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from .colors import get_colors


class NestedDisplay:
    """Render data in Salt's nested layout with one colour table."""

    def __init__(self, colors: dict[str, str]) -> None:
        self.colors = colors

    def render(self, data: Any, indent: int = 0) -> str:
        lines: list[str] = []
        self._walk(data, indent, "", lines)
        return "\n".join(lines)

    # -- helpers -----------------------------------------------------------
    def _scalar(self, color: str, indent: int, prefix: str, text: str) -> str:
        return f"{' ' * indent}{self.colors[color]}{prefix}{text}{self.colors['ENDC']}"

    @staticmethod
    def _keys(mapping: Mapping[Any, Any]) -> list[Any]:
        if isinstance(mapping, OrderedDict):
            return list(mapping)
        try:
            return sorted(mapping)
        except TypeError:
            return sorted(mapping, key=str)

    def _walk(self, value: Any, indent: int, prefix: str, lines: list[str]) -> None:
        colors = self.colors
        if value is None or isinstance(value, (bool, numbers.Number)):
            lines.append(self._scalar("LIGHT_YELLOW", indent, prefix, str(value)))
            return
        if isinstance(value, (bytes, bytearray)):
            try:
                value = bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                return
        if isinstance(value, str):
            cont = " " * len(prefix)
            for num, line in enumerate(value.splitlines()):
                lines.append(self._scalar("GREEN", indent, prefix if num == 0 else cont, line))
            return
        if isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, (list, tuple, Mapping)):
                    lines.append(f"{' ' * indent}{colors['GREEN']}|_{colors['ENDC']}")
                    self._walk(item, indent + 2, "", lines)
                else:
                    self._walk(item, indent, "- ", lines)
            return
        if isinstance(value, Mapping):
            if indent:
                lines.append(f"{' ' * indent}{colors['CYAN']}----------{colors['ENDC']}")
            for key in self._keys(value):
                lines.append(f"{' ' * indent}{colors['CYAN']}{key}{colors['ENDC']}:")
                self._walk(value[key], indent + 4, "", lines)
            return
        # sets, objects and anything else: Salt prints nothing for them


def render_nested(data: Any, opts: dict[str, Any], color: bool, indent: int | None = None) -> str:
    """Text of ``data`` in the nested layout (``nested_indent`` sets the base column)."""
    if indent is None:
        indent = int(opts.get("nested_indent", 0) or 0)
    return NestedDisplay(get_colors(color)).render(data, indent)
