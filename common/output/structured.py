"""The machine-readable and plain outputters: json, yaml, pprint, raw, txt, quiet.

Runs in every CLI that prints a return. Each function takes the whole return
and the options and gives back the text Salt 3007 prints for that ``--out``
(before the final newline the caller's ``print`` adds).
"""

from __future__ import annotations

import json
import pprint
from typing import Any

from .. import yamlout
from ..exceptions import FallbackToNested


# -- json ------------------------------------------------------------------
def render_json(data: Any, opts: dict[str, Any]) -> str:
    """``--out=json``: four-space indent by default; ``output_indent`` (the
    ``--out-indent`` option) sets it, a negative value prints one line and
    ``pretty`` also sorts keys. Values JSON cannot hold print as their repr."""
    indent: Any = opts.get("output_indent")
    sort_keys = False
    if indent is None:
        indent = 4
    elif indent == "pretty":
        indent, sort_keys = 4, True
    elif isinstance(indent, bool):
        indent = 4
    elif isinstance(indent, int):
        if indent < 0:
            indent = None
    elif isinstance(indent, str):
        try:
            indent = int(indent)
            if indent < 0:
                indent = None
        except ValueError:
            pass  # json.dumps accepts a string indent and uses it verbatim
    else:
        indent = 4
    return json.dumps(data, default=repr, indent=indent, sort_keys=sort_keys, ensure_ascii=False)


# -- yaml ------------------------------------------------------------------
# The dumper of the yaml Jinja filters (briny.common.yamlout), as in Salt, where the outputter and
# the filters share one: ordered mappings in order, tuples and sets as lists, anything else as its
# text, libyaml's emitter when PyYAML has it.


def _indent_opt(opts: dict[str, Any]) -> int | None:
    """``output_indent`` as a number (None when unset); ``pretty`` and other
    text make the yaml and pprint outputters give up, as Salt's do."""
    indent = opts.get("output_indent")
    if indent is None or isinstance(indent, bool):
        return None
    if isinstance(indent, int):
        return indent
    try:
        return int(indent)
    except (TypeError, ValueError) as exc:
        raise FallbackToNested(f"output_indent {indent!r} is not a number") from exc


def render_yaml(data: Any, opts: dict[str, Any]) -> str:
    """``--out=yaml``: block style, keys sorted, unicode kept as is;
    ``output_indent`` sets the indent, a negative one prints flow style."""
    indent = _indent_opt(opts)
    kwargs: dict[str, Any] = {"default_flow_style": False}
    if indent is not None:
        if indent < 0:
            kwargs["default_flow_style"] = True
        else:
            kwargs["indent"] = indent
    text = yamlout.safe_dump(data, **kwargs)
    # A bare scalar document ends with an explicit "..." marker; Salt does not
    # print it.
    if text.endswith("\n...\n"):
        text = text[: -len("...\n")]
    return text


# -- pprint, raw, txt, quiet ------------------------------------------------
def render_pprint(data: Any, opts: dict[str, Any]) -> str:
    """``--out=pprint``: Python's pretty printer; ``output_indent`` (when not
    negative) is its indent."""
    indent = _indent_opt(opts)
    if indent is not None and indent >= 0:
        return pprint.pformat(data, indent=indent)
    return pprint.pformat(data)


def render_raw(data: Any, opts: dict[str, Any]) -> str:
    """``--out=raw``: the Python text of the data."""
    return str(data)


def render_txt(data: Any, opts: dict[str, Any]) -> str:
    """``--out=txt``: ``key: value`` per top-level key, a string value one
    line per line of it; a string prints as is, anything else pretty-printed."""
    if isinstance(data, str):
        return data
    if not isinstance(data, dict):
        return pprint.pformat(data)
    lines: list[str] = []
    for key, value in data.items():
        if isinstance(value, str):
            for line in value.splitlines():
                lines.append(f"{key}: {line}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines)


def render_quiet(data: Any, opts: dict[str, Any]) -> str:
    """``--out=quiet``: nothing."""
    return ""
