"""Ini files as Salt 3007's ``ini`` module reads and writes them.

A file is a top part (options before any ``[section]``) and sections, each a
list of lines: options (``key SEP value``), comments (``#`` or ``;``) and
anything else (blank or malformed lines), kept verbatim. An indented line
deeper than the option above it continues that option's value (the value
then holds the newline and the indented text). Values are strings; a value
set from YAML is ``str()`` of it (``True`` -> ``"True"``), as in Salt.

Writing follows Salt's layout so files come out the same: every option is
written ``key = value`` (``key=value`` with ``no_spaces``; a separator made
of spaces is one space), each section header has one blank line before it
(blank lines at the ends of a part are not kept), new options go at the end
of their part, or in place of a commented-out line for the same key
(``#Storage=auto`` becomes ``Storage = persistent``), new sections at the
end of the file.

Where briny keeps more than Salt (deliberately): a key written several
times keeps all its lines until a state sets or removes it (Salt keeps only
the last value, at the first one's place, whenever it writes the file); a
commented-out line above a key that is set further down is kept; a section
header that appears twice is merged into the first without dropping lines.
Lookups see the last value of a repeated key, as Salt's do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from briny.common.exceptions import CommandExecutionError

HEADER = re.compile(r"^\s*\[(.+?)\]\s*$", re.MULTILINE)
COMMENT = re.compile(r"^\s*(#|;)\s*(.*)")
INDENTED = re.compile(r"(\s+)(.*)")


def option_regex(separator: str) -> re.Pattern[str]:
    """indent, key, separator, value of an option line (Salt's pattern)."""
    return re.compile(r"(\s*)(.+?)\s*(" + re.escape(separator) + r")\s*(.*)\s*")


@dataclass
class Line:
    """An option (``key`` set, ``text`` is its value) or any other line (``text`` verbatim)."""

    text: str
    key: str | None = None
    comment: bool = False


@dataclass
class Section:
    name: str
    lines: list[Line] = field(default_factory=list)

    def get(self, key: str) -> str | None:
        found = None
        for line in self.lines:
            if line.key == key:
                found = line.text
        return found

    def as_dict(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for line in self.lines:
            if line.key is not None:
                out[line.key] = line.text
        return out

    def set(self, key: str, value: str, opt: re.Pattern[str]) -> dict[str, Any] | None:
        """Set ``key``; the change ``{before, after}`` or None when it already had ``value``."""
        where = [i for i, line in enumerate(self.lines) if line.key == key]
        if not where:
            new = Line(value, key)
            for i, line in enumerate(self.lines):
                found = opt.match(line.text.lstrip("#")) if line.comment else None
                if found and found.group(2) == key:
                    self.lines[i] = new
                    break
            else:
                self.lines.append(new)
            return {"before": None, "after": value}
        before = self.lines[where[-1]].text
        if before == value:
            return None
        self.lines[where[0]].text = value
        for i in reversed(where[1:]):
            del self.lines[i]
        return {"before": before, "after": value}

    def remove(self, key: str) -> str | None:
        """Drop every line of ``key``; its (last) value, or None when it was not there."""
        value = self.get(key)
        self.lines = [line for line in self.lines if line.key != key]
        return value


@dataclass
class IniDoc:
    top: Section = field(default_factory=lambda: Section(""))
    sections: dict[str, Section] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.top.as_dict())
        for name, section in self.sections.items():
            out[name] = section.as_dict()
        return out


def _parse_part(body: str, opt: re.Pattern[str]) -> list[Line]:
    body = body.strip("\n")
    lines: list[Line] = []
    if not body:
        return lines
    indent_of_option = ""
    for raw in body.split("\n"):
        if COMMENT.match(raw):
            lines.append(Line(raw, comment=True))
            continue
        indented = INDENTED.match(raw)
        if indented and lines and indented.group(1).replace("\t", "    ") > indent_of_option:
            lines[-1].text += "\n" + raw
            continue
        found = opt.match(raw)
        if found:
            indent_of_option = found.group(1).replace("\t", "    ")
            lines.append(Line(found.group(4), found.group(2)))
            continue
        lines.append(Line(raw))
    return lines


def parse(text: str, separator: str = "=") -> IniDoc:
    opt = option_regex(separator)
    doc = IniDoc()
    text = "\n".join(text.splitlines())
    if not text:
        return doc
    parts = HEADER.split(text)
    doc.top.lines = _parse_part(parts[0], opt)
    for i in range(1, len(parts) - 1, 2):
        name, lines = parts[i], _parse_part(parts[i + 1], opt)
        if name in doc.sections:
            doc.sections[name].lines.extend(lines)
        else:
            doc.sections[name] = Section(name, lines)
    return doc


def written_separator(separator: str, no_spaces: bool = False) -> str:
    if separator and all(c == " " for c in separator):
        return " "
    return separator.strip() if no_spaces else f" {separator.strip()} "


def render(doc: IniDoc, separator: str = "=", no_spaces: bool = False) -> str:
    sep = written_separator(separator, no_spaces)

    def lines(section: Section) -> list[str]:
        return [f"{line.key}{sep}{line.text}\n" if line.key is not None else f"{line.text}\n" for line in section.lines]

    out = lines(doc.top)
    for section in doc.sections.values():
        out.append(f"\n[{section.name}]\n")
        out.extend(lines(section))
    if out:
        out[0] = out[0].lstrip("\n")
    return "".join(out)


def _value(key: Any, value: Any, where: str) -> str:
    if isinstance(value, dict):
        raise CommandExecutionError(f"The value of '{key}'{where} is a mapping: ini files have one level of sections")
    return str(value)


def update(doc: IniDoc, sections: dict[str, Any], separator: str = "=") -> dict[str, Any]:
    """Set options (scalars) and sections (mappings of options); Salt's changes dict."""
    if not isinstance(sections, dict):
        raise CommandExecutionError(f"sections must be a dictionary, not {type(sections).__name__}")
    opt = option_regex(separator)
    changes: dict[str, Any] = {}
    for key, value in sections.items():
        key = str(key)
        if isinstance(value, dict):
            section = doc.sections.get(key)
            if section is None:
                before = doc.top.remove(key)
                section = doc.sections[key] = Section(key)
                for k, v in value.items():
                    section.set(str(k), _value(k, v, f" in section '{key}'"), opt)
                changes[key] = {"before": before, "after": section.as_dict()}
                continue
            sub = {}
            for k, v in value.items():
                change = section.set(str(k), _value(k, v, f" in section '{key}'"), opt)
                if change:
                    sub[str(k)] = change
            if sub:
                changes[key] = sub
        else:
            if key in doc.sections:
                raise CommandExecutionError(f"'{key}' is a section of the file, not an option")
            change = doc.top.set(key, str(value), opt)
            if change:
                changes[key] = change
    return changes


def remove_option(doc: IniDoc, section: str | None, option: str) -> str | None:
    """Remove ``option`` from ``section`` (the top part when ``section`` is empty)."""
    if not section:
        return doc.top.remove(option)
    found = doc.sections.get(section)
    return None if found is None else found.remove(option)


def remove_section(doc: IniDoc, section: str) -> dict[str, str] | None:
    found = doc.sections.pop(section, None)
    return None if found is None else found.as_dict()
