"""The hosts file (``/etc/hosts``) as Salt 3007's ``hosts`` module reads it, edited line by line.

A line is an address, its names (aliases) and an optional ``# comment``;
full-line comments, blank and other lines are kept as they are. Reading
gives Salt's view (``list_hosts``): addresses in the order they first
appear, the names of every line of an address together, its comment (the
last one), and each full-line comment as ``comment-N: [line]``.

Edits touch only the lines they change, written as Salt writes them
(``ADDR<tab><tab>NAMES`` with ``<tab><tab># COMMENT``; a line a name was
removed from as Salt's ``rm_host`` leaves it, ``ADDR<tab><tab>a b # C``):
new lines go at the end. Salt rewrites the whole file when it adds a name
or a comment (blank lines dropped, the lines of one address merged);
briny keeps every other line byte for byte (deliberately).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class HostLine:
    """One line; ``ip`` is None for comments, blank and other lines (kept verbatim in ``raw``)."""

    raw: str
    ip: str | None = None
    names: list[str] = field(default_factory=list)
    comment: str | None = None


def parse_line(raw: str) -> HostLine:
    text = raw.strip()
    if not text or text.startswith("#"):
        return HostLine(raw)
    comment = None
    if "#" in text:
        comment = text[text.index("#") + 1 :].lstrip()
        text = text[: text.index("#")].strip()
    comps = text.split()
    return HostLine(raw, comps[0], comps[1:], comment or None)


def parse(text: str) -> list[HostLine]:
    return [parse_line(raw) for raw in text.splitlines()]


def render(lines: list[HostLine]) -> str:
    return "".join(line.raw + "\n" for line in lines)


def listing(lines: list[HostLine]) -> dict[str, Any]:
    """Salt's ``list_hosts``: ``{ip: {"aliases": [...], "comment": c}, "comment-N": [line]}``."""
    out: dict[str, Any] = {}
    count = 0
    for line in lines:
        if line.ip is None:
            if line.raw.strip():
                out[f"comment-{count}"] = [line.raw.strip()]
                count += 1
            continue
        entry = out.setdefault(line.ip, {})
        entry.setdefault("aliases", []).extend(line.names)
        if line.comment:
            entry["comment"] = line.comment
    return out


def _written(ip: str, names: list[str], comment: str | None) -> HostLine:
    raw = f"{ip}\t\t{' '.join(names)}" + (f"\t\t# {comment}" if comment else "")
    return HostLine(raw, ip, list(names), comment)


def add_name(lines: list[HostLine], ip: str, name: str) -> bool:
    """Add ``name`` to ``ip`` (its first line, or a new line at the end); False when it is there."""
    mine = [i for i, line in enumerate(lines) if line.ip == ip]
    if any(name in lines[i].names for i in mine):
        return False
    if mine:
        first = lines[mine[0]]
        lines[mine[0]] = _written(ip, first.names + [name], first.comment)
    else:
        lines.append(_written(ip, [name], None))
    return True


def set_comment(lines: list[HostLine], ip: str, comment: str) -> bool:
    """Set the comment of ``ip`` (where it has one, else on its first line); False when unchanged."""
    mine = [i for i, line in enumerate(lines) if line.ip == ip]
    with_comment = [i for i in mine if lines[i].comment]
    where = with_comment[-1] if with_comment else mine[0]
    if lines[where].comment == comment:
        return False
    lines[where] = _written(ip, lines[where].names, comment)
    return True


def remove_name(lines: list[HostLine], ip: str, name: str) -> bool:
    """Remove ``name`` from every line of ``ip``; a line left without names goes."""
    changed = False
    for i in reversed(range(len(lines))):
        line = lines[i]
        if line.ip != ip or name not in line.names:
            continue
        changed = True
        names = [n for n in line.names if n != name]
        if not names:
            del lines[i]
            continue
        raw = f"{ip}\t\t" + "".join(f"{n} " for n in names) + (f"# {line.comment}" if line.comment else "")
        lines[i] = HostLine(raw, ip, names, line.comment)
    return changed


def set_names(lines: list[HostLine], ip: str, names: str, comment: str | None = None) -> bool:
    """Salt's ``set_host``: the first line of ``ip`` becomes ``names`` (others of ``ip`` go);
    empty ``names`` removes ``ip``'s lines. True when the lines changed."""
    raw = f"{ip}\t\t{names}" + (f"\t\t# {comment}" if comment else "")
    new = HostLine(raw, ip, names.split(), comment) if names.strip() else None
    before = [line.raw for line in lines]
    out: list[HostLine] = []
    placed = False
    for line in lines:
        if line.ip != ip:
            out.append(line)
        elif new is not None and not placed:
            out.append(new)
            placed = True
    if new is not None and not placed:
        out.append(new)
    lines[:] = out
    return [line.raw for line in lines] != before
