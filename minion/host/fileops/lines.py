"""Text editing behind ``file.line``, ``replace``, ``blockreplace``, comments and key/value.

Runs on the managed host, called by the ``file`` execution module. Every
function takes the old text and returns the new text (equal when nothing
would change) and never touches the disk; the caller writes atomically.
Lines keep the file's last-newline convention; appending to a file that
does not end in a newline adds one first, as Salt does.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

log = logging.getLogger(__name__)
LINE_MODES = ("ensure", "replace", "delete", "insert")


def regex_flags(flags: Any) -> int:
    """``8``, ``"IGNORECASE"``, ``["I", "MULTILINE"]`` → an ``re`` flag value."""
    if isinstance(flags, int) and not isinstance(flags, bool):
        return flags
    names = [flags] if isinstance(flags, str) else list(flags or [])
    value = 0
    for name in names:
        flag = getattr(re, str(name).upper(), None)
        if not isinstance(flag, int):
            raise SaltInvocationError(f"Invalid re flag given: {name}")
        value |= int(flag)
    return value


def compile_re(pattern: str, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(str(pattern), flags)
    except re.error as exc:
        raise CommandExecutionError(f"Invalid regular expression '{pattern}': {exc}") from None


def _split(text: str) -> tuple[list[str], bool]:
    return text.splitlines(), text.endswith("\n") or text == ""


def _join(lines: list[str], newline: bool) -> str:
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if newline else "")


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


# -- file.line ------------------------------------------------------------------
def line(
    text: str,
    content: str | None,
    match: str | None = None,
    mode: str | None = None,
    location: str | None = None,
    before: str | None = None,
    after: str | None = None,
    indent: bool = True,
) -> str:
    """``text`` with ``content`` ensured, replaced, deleted or inserted (Salt's ``file.line``)."""
    mode = (mode or "").lower()
    if mode not in LINE_MODES:
        raise CommandExecutionError(f'Unknown mode: "{mode}"')
    if content is None and mode != "delete":
        raise CommandExecutionError("Content can only be empty if mode is ['delete']")
    body = [] if content is None else str(content).splitlines() or [""]
    lines, newline = _split(text)
    if match is None and mode in ("replace", "delete"):
        match = str(content) if content is not None else None
        if match is None:
            raise CommandExecutionError("Mode 'delete' needs a 'match' or 'content'")
    if mode == "delete":
        rx = compile_re(match)  # type: ignore[arg-type]  # not None: taken from content above
        lines = [ln for ln in lines if not rx.search(ln)]
    elif mode == "replace":
        rx = compile_re(match)  # type: ignore[arg-type]  # not None: taken from content above
        out: list[str] = []
        for ln in lines:
            if rx.search(ln) and [ln.strip()] != [b.strip() for b in body]:
                pad = _indent_of(ln) if indent else ""
                out.extend(pad + b.lstrip() if indent else b for b in body)
            else:
                out.append(ln)
        lines = out
    elif mode == "insert":
        lines = _insert(lines, body, location, before, after, indent)
    else:
        lines = _ensure(lines, body, before, after, indent)
    return _join(lines, newline or not text)


def _find(lines: list[str], pattern: str | None, start: int = 0) -> int:
    if pattern is None:
        return -1
    rx = compile_re(pattern)
    for i in range(start, len(lines)):
        if rx.search(lines[i]):
            return i
    return -1


def _same(block: list[str], body: list[str]) -> bool:
    return [b.strip() for b in block] == [b.strip() for b in body]


def _padded(body: list[str], anchor: str, indent: bool) -> list[str]:
    pad = _indent_of(anchor) if indent else ""
    return [pad + b.lstrip() if indent else b for b in body]


def _anchor(lines: list[str], pattern: str) -> int:
    """The index of the first line matching ``pattern``; CommandExecutionError (Salt's words) when
    none does."""
    i = _find(lines, pattern)
    if i < 0:
        raise CommandExecutionError(f'Neither before or after was found in file: "{pattern}"')
    return i


def _put_after(lines: list[str], body: list[str], after: str, indent: bool) -> list[str]:
    """``body`` right after the first line matching ``after`` (unchanged when it is there)."""
    i = _anchor(lines, after)
    if _same(lines[i + 1 : i + 1 + len(body)], body):
        return lines
    return lines[: i + 1] + _padded(body, lines[i], indent) + lines[i + 1 :]


def _put_before(lines: list[str], body: list[str], before: str, indent: bool) -> list[str]:
    """``body`` right before the first line matching ``before`` (unchanged when it is there)."""
    j = _anchor(lines, before)
    n = len(body)
    if j >= n and _same(lines[j - n : j], body):
        return lines
    return lines[:j] + _padded(body, lines[j], indent) + lines[j:]


def _insert(
    lines: list[str], body: list[str], location: str | None, before: str | None, after: str | None, indent: bool
) -> list[str]:
    n = len(body)
    if before is None and after is None:
        if location == "start":
            return lines if _same(lines[:n], body) else body + lines
        if location == "end" or location is None:
            return lines if lines and _same(lines[-n:], body) else lines + body
        raise CommandExecutionError(f'Unknown location: "{location}"')
    if after is not None and before is not None:
        i = _anchor(lines, after)
        j = _find(lines, before, i + 1)
        if j < 0:
            raise CommandExecutionError(f'Neither before or after was found in file: "{before}"')
        if _same(lines[i + 1 : j], body):
            return lines
        return lines[: i + 1] + _padded(body, lines[i], indent) + lines[i + 1 :]
    if after is not None:
        return _put_after(lines, body, after, indent)
    assert before is not None  # one of the two is set: checked above
    return _put_before(lines, body, before, indent)


def _ensure(lines: list[str], body: list[str], before: str | None, after: str | None, indent: bool) -> list[str]:
    n = len(body)
    if before is None and after is None:
        raise CommandExecutionError(
            "Wrong conditions? Unable to ensure line without knowing where to put it before and/or after."
        )
    if before is not None and after is not None:
        i = _find(lines, after)
        j = _find(lines, before, i + 1 if i >= 0 else 0)
        if i < 0 or j < 0:
            raise CommandExecutionError("Neither before or after was found in file")
        between = lines[i + 1 : j]
        if _same(between, body):
            return lines
        if len(between) > n:
            raise CommandExecutionError('Found more than one line between boundaries "before" and "after".')
        return lines[: i + 1] + _padded(body, lines[i], indent) + lines[j:]
    if after is not None:
        return _put_after(lines, body, after, indent)
    assert before is not None  # one of the two is set: checked above
    return _put_before(lines, body, before, indent)


# -- file.replace / blockreplace --------------------------------------------------
def _add_at_end(text: str, block: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return text + block


def replace(
    text: str,
    pattern: str,
    repl: str,
    count: int = 0,
    flags: Any = 8,
    append_if_not_found: bool = False,
    prepend_if_not_found: bool = False,
    not_found_content: str | None = None,
    backslash_literal: bool = False,
) -> tuple[str, bool]:
    """(new text, whether the pattern matched) for Salt's ``file.replace``."""
    rx = compile_re(pattern, regex_flags(flags))
    repl = str(repl)
    if backslash_literal:
        repl = repl.replace("\\", "\\\\")
    try:
        new, hits = rx.subn(repl, text, count=int(count or 0))
    except (re.error, IndexError) as exc:
        raise CommandExecutionError(f"Invalid replacement '{repl}': {exc}") from None
    if hits:
        return new, True
    if append_if_not_found or prepend_if_not_found:
        add = str(not_found_content if not_found_content is not None else repl)
        if not add.endswith("\n"):
            add += "\n"
        if prepend_if_not_found:
            return add + text, False
        return _add_at_end(text, add), False
    return text, False


def blockreplace(
    text: str,
    marker_start: str,
    marker_end: str,
    content: str | None = "",
    append_if_not_found: bool = False,
    prepend_if_not_found: bool = False,
    append_newline: bool | None = None,
    insert_before_match: str | None = None,
    insert_after_match: str | None = None,
) -> str:
    """``text`` with the block between the marker lines replaced by ``content``."""
    body = "" if content is None else str(content)
    if not body.endswith("\n") or append_newline:
        body += "\n"
    lines = text.splitlines(True)
    start = next((i for i, ln in enumerate(lines) if marker_start in ln), -1)
    end = next((j for j in range(start + 1, len(lines)) if marker_end in lines[j]), -1) if start >= 0 else -1
    if start >= 0 and end < 0:
        raise CommandExecutionError("Unterminated marked block. End of file reached before marker_end.")
    if start >= 0:
        head = "".join(lines[: start + 1])
        if not head.endswith("\n"):
            head += "\n"
        return head + body + "".join(lines[end:])
    block = f"{marker_start}\n{body}{marker_end}\n"
    for pattern, after in ((insert_before_match, False), (insert_after_match, True)):
        if pattern:
            rx = compile_re(pattern)
            for i, ln in enumerate(lines):
                if rx.search(ln):
                    if after:
                        lead = "".join(lines[: i + 1])
                        return _add_at_end(lead, block) + "".join(lines[i + 1 :])
                    return "".join(lines[:i]) + block + "".join(lines[i:])
    if prepend_if_not_found:
        return block + text
    if append_if_not_found:
        return _add_at_end(text, block)
    raise CommandExecutionError("Cannot edit marked block. Markers were not found in file.")


# -- comments -----------------------------------------------------------------
def _unanchored(regex: str) -> str:
    return str(regex).lstrip("^").rstrip("$")


def comment(text: str, regex: str, char: str = "#") -> str:
    """Put ``char`` before each line matching ``regex``."""
    rx = compile_re(regex)
    lines, newline = _split(text)
    return _join([char + ln if rx.search(ln) else ln for ln in lines], newline)


def commented(line: str, regex: str, char: str = "#") -> re.Match[str] | None:
    """The match (group 1: indentation, 2: the rest) when ``line`` holds ``regex`` behind ``char``."""
    m = re.match(rf"^(\s*){re.escape(char)}(.*)$", line)
    if m and compile_re(regex).search(m.group(2).lstrip()):
        return m
    return None


def uncomment(text: str, regex: str, char: str = "#") -> str:
    """Remove ``char`` from the lines where it comments out ``regex``."""
    lines, newline = _split(text)
    out = []
    for ln in lines:
        m = commented(ln, regex, char)
        out.append(m.group(1) + m.group(2) if m else ln)
    return _join(out, newline)


# -- key/value -------------------------------------------------------------------
def keyvalue(
    text: str,
    key_values: dict[str, Any],
    separator: str = "=",
    append_if_not_found: bool = False,
    uncomment_char: str | None = None,
    key_ignore_case: bool = False,
    value_ignore_case: bool = False,
    count: int = 1,
) -> tuple[str, list[str], int]:
    """(new text, Salt's diff lines, number of changed lines) for ``file.keyvalue``."""
    wanted = {str(k): str(v) for k, v in key_values.items()}
    lines, newline = _split(text)
    diff: list[str] = []
    seen: dict[str, int] = {k: 0 for k in wanted}
    changed = 0
    out = []
    for ln in lines:
        probe = ln
        if uncomment_char and probe.lstrip().startswith(uncomment_char):
            probe = probe.lstrip()[len(uncomment_char) :]
        key, sep, value = probe.partition(separator)
        key = key.strip()
        hit = next((k for k in wanted if (k.lower() == key.lower() if key_ignore_case else k == key)), None)
        if not sep or hit is None or (count and seen[hit] >= count):
            out.append(ln)
            continue
        seen[hit] += 1
        want = wanted[hit]
        same_val = value.strip().lower() == want.lower() if value_ignore_case else value.strip() == want
        if same_val and probe == ln:
            out.append(ln)
            continue
        new = f"{hit}{separator}{want}"
        diff += [f"- {ln}", f"+ {new}"]
        out.append(new)
        changed += 1
    if append_if_not_found:
        for k, v in wanted.items():
            if not seen[k]:
                new = f"{k}{separator}{v}"
                diff += ["- <EOF>", f"+ {new}", "+ <EOF>"]
                out.append(new)
                changed += 1
    return _join(out, newline or not text), diff, changed
