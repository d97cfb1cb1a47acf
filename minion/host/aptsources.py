"""APT source lists as data: one-line entries (``*.list``) and deb822 stanzas (``*.sources``).

Pure parsing and formatting behind the ``pkg`` repo functions (``list_repos``,
``get_repo``, ``mod_repo``, ``del_repo``): reading a file gives a
:class:`SourceFile`, whose :class:`Entry` records are what Salt 3007 reports
for a repo (``type``, ``uri``, ``dist``, ``comps``, ``architectures``,
``signedby``, ``disabled``, ``line``, ``file``); editing entries and rendering
the file gives its new text. Lines nobody changed are written back as they
were (Salt rewrites every line of every file it read); comments, blank lines
and lines that are not repos are kept.

A one-line entry is read as Salt reads it: ``[#] type [options] uri dist
[comp ...] [# comment]``; a leading ``#`` makes a disabled repo when the rest
is a valid entry, any other line is kept verbatim. A deb822 stanza (Types,
URIs, Suites, Components, Architectures, Signed-By, Enabled, ...) gives one
entry per type, URI and suite; an entry can be edited or removed in place
only when its stanza holds that one repo (comment lines right above a
stanza belong to it and go with it).

Nothing here runs commands or reads the config: the execution module does
the I/O (atomically) and passes text in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

SOURCES_LIST = "/etc/apt/sources.list"
SOURCES_DIR = "/etc/apt/sources.list.d"
TYPES = ("deb", "deb-src", "rpm", "rpm-src")
_DEB822_KEYS = {
    k.lower(): k for k in ("Types", "URIs", "Suites", "Components", "Architectures", "Signed-By", "Enabled")
}


@dataclass
class Entry:
    """One repo, as Salt 3007's ``list_repos`` reports it."""

    type: str = ""
    uri: str = ""
    dist: str = ""
    comps: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    disabled: bool = False
    comment: str = ""
    file: str = SOURCES_LIST
    line: str = ""
    invalid: bool = False
    stanza: int | None = None
    dirty: bool = False

    @property
    def architectures(self) -> list[str]:
        value = self.options.get("arch", "")
        return [a for a in value.split(",") if a] if value else []

    @architectures.setter
    def architectures(self, archs: list[str]) -> None:
        if archs:
            self.options["arch"] = ",".join(archs)
        else:
            self.options.pop("arch", None)

    @property
    def signedby(self) -> str:
        return self.options.get("signed-by", "")

    @signedby.setter
    def signedby(self, path: Any) -> None:
        if path:
            self.options["signed-by"] = str(path)
        else:
            self.options.pop("signed-by", None)

    def render(self) -> str:
        """The entry as one line of a ``.list`` file (Salt's layout)."""
        if self.invalid:
            return self.line
        words = ["#"] if self.disabled else []
        words.append(self.type)
        if self.options:
            words.append("[" + " ".join(f"{k}={v}" for k, v in self.options.items()) + "]")
        words += [self.uri, self.dist, *self.comps]
        if self.comment:
            words.append(f"#{self.comment}")
        return " ".join(w for w in words if w)

    def record(self) -> dict[str, Any]:
        """What ``pkg.list_repos`` / ``pkg.get_repo`` answer for this entry."""
        return {
            "file": self.file,
            "comps": list(self.comps),
            "disabled": self.disabled,
            "dist": self.dist,
            "type": self.type,
            "uri": self.uri,
            "line": self.line.strip(),
            "architectures": self.architectures,
            "signedby": self.signedby,
        }


# ---------------------------------------------------------------------------
# one-line entries
# ---------------------------------------------------------------------------


def _options(text: str) -> dict[str, str]:
    """``arch=amd64 signed-by=/k.gpg`` -> ``{"arch": "amd64", "signed-by": "/k.gpg"}`` (in order)."""
    opts: dict[str, str] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if sep:
            opts[key] = ",".join(v for v in (opts.get(key, ""), value) if v) if key == "arch" else value
    return opts


def parse_line(text: str, file: str = SOURCES_LIST) -> Entry:
    """One line of a ``.list`` file; not a repo: ``invalid`` with the line kept."""
    raw = text.rstrip("\n")
    line = raw.strip()
    entry = Entry(file=file, line=raw, invalid=True)
    if not line:
        return entry
    disabled = line.startswith("#")
    if disabled:
        line = line[1:]
    comment = ""
    idx = line.find("#")
    if idx > 0:
        line, comment = line[:idx], line[idx + 1 :]
    line = line.strip()
    options: dict[str, str] = {}
    m = re.match(r"^(\S+)\s+\[([^\]]*)\]\s*(.*)$", line)
    if m:
        typ, rest = m.group(1), m.group(3)
        options = _options(m.group(2))
        words = [typ, *rest.split()]
    elif re.match(r"^\S+\s+\[", line):
        return entry  # an option list that never closes
    else:
        words = line.split()
    if len(words) < 3 or words[0] not in TYPES:
        return entry
    return Entry(
        type=words[0],
        uri=words[1],
        dist=words[2],
        comps=words[3:],
        options=options,
        disabled=disabled,
        comment=comment,
        file=file,
        line=raw,
    )


def split_repo(repo: str) -> Entry:
    """A repo definition (``deb [signed-by=/k.gpg] https://host/debian stable main``)."""
    return parse_line(str(repo))


def strip_uri(repo: str) -> str:
    """Salt's ``strip_uri``: no trailing slash on http(s)/ftp URIs."""
    words = str(repo).split()
    return " ".join(w.rstrip("/") if w.startswith(("http://", "https://", "ftp://")) else w for w in words)


def combine_comments(comments: Any) -> str:
    if isinstance(comments, list):
        return " ".join(str(c) for c in comments).strip()
    return str(comments).strip()


# ---------------------------------------------------------------------------
# deb822 stanzas
# ---------------------------------------------------------------------------


@dataclass
class Stanza:
    """A deb822 paragraph: its fields in order (key as written, value with continuation lines)."""

    fields: list[tuple[str, str]] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    def get(self, key: str) -> str:
        for k, v in self.fields:
            if k.lower() == key.lower():
                return v
        return ""

    def set(self, key: str, value: str | None) -> None:
        """Set (or with None drop) a field, keeping its place."""
        for i, (k, _) in enumerate(self.fields):
            if k.lower() == key.lower():
                if value is None:
                    del self.fields[i]
                else:
                    self.fields[i] = (k, value)
                return
        if value is not None:
            self.fields.append((_DEB822_KEYS.get(key.lower(), key), value))

    def render(self) -> str:
        lines = list(self.comments)
        for k, v in self.fields:
            first, *rest = v.split("\n")
            lines.append(f"{k}: {first}".rstrip())
            lines += [f" {r}" if r.strip() else " ." for r in rest]
        return "\n".join(lines)


def parse_stanzas(text: str) -> list[Stanza | str]:
    """A ``.sources`` file: stanzas, and the text between them (blank lines, lone comments)."""
    blocks: list[Stanza | str] = []
    current: Stanza | None = None
    pending: list[str] = []
    for raw in text.split("\n"):
        if not raw.strip():
            if current is not None:
                blocks.append(current)
                current = None
            blocks.extend(pending)
            pending = []
            blocks.append(raw)
            continue
        if raw.startswith("#"):
            if current is None:
                pending.append(raw)
            else:
                current.fields.append(("#", raw))
            continue
        if raw[:1] in (" ", "\t") and current is not None and current.fields:
            k, v = current.fields[-1]
            cont = raw.strip()
            current.fields[-1] = (k, v + "\n" + ("" if cont == "." else cont))
            continue
        key, sep, value = raw.partition(":")
        if not sep:
            raise CommandExecutionError(f"Malformed deb822 line: {raw!r}")
        if current is None:
            current = Stanza(comments=pending)
            pending = []
        current.fields.append((key.strip(), value.strip()))
    if current is not None:
        blocks.append(current)
    blocks.extend(pending)
    while blocks and blocks[-1] == "":
        blocks.pop()
    return blocks


def render_stanzas(blocks: list[Stanza | str]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Stanza):
            rendered = []
            for k, v in block.fields:
                if k == "#":
                    rendered.append(v)
                else:
                    rendered.append(Stanza(fields=[(k, v)]).render())
            out.append("\n".join([*block.comments, *rendered]))
        else:
            out.append(block)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")
    return text + "\n" if text else ""


def stanza_entries(stanza: Stanza, index: int, file: str) -> list[Entry]:
    """The repos a stanza declares (one per type, URI and suite)."""
    types, uris, suites = stanza.get("Types").split(), stanza.get("URIs").split(), stanza.get("Suites").split()
    comps = stanza.get("Components").split()
    options: dict[str, str] = {}
    if stanza.get("Architectures"):
        options["arch"] = ",".join(stanza.get("Architectures").split())
    signed = stanza.get("Signed-By")
    if signed:
        options["signed-by"] = signed if "\n" not in signed else "(key in the file)"
    disabled = stanza.get("Enabled").strip().lower() in ("no", "false", "0")
    entries = []
    for typ in types:
        for uri in uris:
            for suite in suites:
                entry = Entry(
                    type=typ,
                    uri=uri,
                    dist=suite,
                    comps=list(comps),
                    options=dict(options),
                    disabled=disabled,
                    file=file,
                    stanza=index,
                )
                entry.line = entry.render()
                entries.append(entry)
    return entries


def stanza_for(entry: Entry) -> Stanza:
    stanza = Stanza()
    fill_stanza(stanza, entry)
    return stanza


def fill_stanza(stanza: Stanza, entry: Entry) -> None:
    """Write ``entry`` into ``stanza`` (a stanza that holds that one repo)."""
    stanza.set("Types", entry.type)
    stanza.set("URIs", entry.uri)
    stanza.set("Suites", entry.dist)
    stanza.set("Components", " ".join(entry.comps) or None)
    stanza.set("Architectures", " ".join(entry.architectures) or None)
    if entry.signedby != "(key in the file)":
        stanza.set("Signed-By", entry.signedby or None)
    stanza.set("Enabled", "no" if entry.disabled else None)


# ---------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------


class SourceFile:
    """One sources file: its items in order, edited in memory, rendered back."""

    def __init__(self, path: str, text: str | None) -> None:
        self.path = path
        self.original = text
        self.deb822 = path.endswith(".sources")
        self.items: list[Any] = []
        if text is None:
            return
        if self.deb822:
            self.items = parse_stanzas(text)
        else:
            self.items = [parse_line(line, path) for line in text.splitlines()]

    def entries(self) -> list[Entry]:
        if not self.deb822:
            return [e for e in self.items if isinstance(e, Entry) and not e.invalid]
        found = []
        for index, block in enumerate(self.items):
            if isinstance(block, Stanza):
                found += stanza_entries(block, index, self.path)
        return found

    def lines(self) -> list[Entry]:
        """Every item of a ``.list`` file, repos or not (Salt counts them all)."""
        return [e for e in self.items if isinstance(e, Entry)] if not self.deb822 else self.entries()

    def _single(self, entry: Entry) -> Stanza:
        stanza = self.items[entry.stanza] if entry.stanza is not None else None
        if not isinstance(stanza, Stanza) or len(stanza_entries(stanza, 0, self.path)) != 1:
            raise CommandExecutionError(
                f"The repo '{entry.render()}' is one of several in a deb822 stanza of {self.path}; "
                "briny edits a stanza only when it holds that one repo"
            )
        return stanza

    def add(self, entry: Entry) -> None:
        entry.file = self.path
        if self.deb822:
            if self.items:
                self.items.append("")
            self.items.append(stanza_for(entry))
            entry.stanza = len(self.items) - 1
        else:
            entry.dirty = True
            self.items.append(entry)

    def update(self, entry: Entry) -> None:
        """``entry`` (one of this file's) was edited: write it back."""
        if self.deb822:
            fill_stanza(self._single(entry), entry)
        else:
            entry.dirty = True

    def remove(self, entry: Entry) -> None:
        if self.deb822:
            stanza = self._single(entry)
            self.items = [b for b in self.items if b is not stanza]
        else:
            self.items = [e for e in self.items if e is not entry]

    def clear(self) -> None:
        self.items = []

    def render(self) -> str:
        if self.deb822:
            return render_stanzas(self.items)
        lines = [e.render() if e.dirty else e.line for e in self.items]
        return "".join(f"{line}\n" for line in lines)

    def changed(self) -> bool:
        return self.render() != (self.original or "") or (self.original is None and bool(self.items))


def find_repo(entries: list[Entry], repo: Entry) -> Entry | None:
    """Salt's ``get_repo`` match: same type, URI (but a trailing slash) and dist, a
    component in common (or none asked for)."""
    for entry in entries:
        same = entry.type == repo.type and entry.uri.rstrip("/") == repo.uri.rstrip("/") and entry.dist == repo.dist
        if same and (not repo.comps or any(c in entry.comps for c in repo.comps)):
            return entry
    return None


def check_repo(repo: str) -> Entry:
    """The definition as an entry, or Salt's error for one that is not a complete entry."""
    entry = split_repo(repo)
    if entry.invalid:
        raise SaltInvocationError(
            f"Name {repo} is not valid. This must be the complete repo entry as seen in the sources file"
        )
    return entry
