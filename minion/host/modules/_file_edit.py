"""The ``file`` module's text edits (``line``, ``replace``, ``blockreplace``, ``comment_line``,
``keyvalue``...): Salt's semantics on top of :mod:`briny.minion.host.fileops.lines`.

A private part of ``minion/host/modules/file.py`` (which imports these and so exposes them as
``file.<name>``)."""

from __future__ import annotations

import os
from typing import Any

from briny.common.exceptions import CommandExecutionError
from briny.minion.host.fileops import diff, lines, managed, tree

from ._file_query import read

__all__ = ["line", "replace", "blockreplace", "comment_line", "comment_state", "keyvalue_edit"]


# -- text edits (the work is in fileops.lines) -------------------------------------
def _edit(path: str, change: Any, dry_run: bool = False, backup: Any = "", create: bool = False) -> str:
    """Apply ``change(old) -> new`` to ``path``; Salt's diff ("" when nothing changes)."""
    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        if not create or os.path.lexists(path):
            raise CommandExecutionError(f"{path}: file not found")
        old = ""
    else:
        old = read(path)  # type: ignore[assignment]  # text: binary=False
    new = change(old)
    if new == old:
        return ""
    if not dry_run:
        if backup and isinstance(backup, str) and os.path.isfile(path):
            tree.copy(path, path + backup)
        managed.write(path, new.encode("utf-8"))
    return diff.unified(old, new)


def line(
    path: str,
    content: Any = None,
    match: str | None = None,
    mode: str | None = None,
    location: str | None = None,
    before: str | None = None,
    after: str | None = None,
    show_changes: bool = True,
    backup: Any = False,
    quiet: bool = False,
    indent: bool = True,
    create: bool = False,
    dry_run: bool = False,
    **kwargs: Any,
) -> str | bool:
    """Edit one line of ``path`` (Salt's ``file.line``); the diff, or False when unchanged."""
    text = None if content is None else str(content)
    out = _edit(
        path,
        lambda old: lines.line(old, text, match, mode, location, before, after, indent),
        dry_run,
        ".bak" if backup is True else backup,
        create,
    )
    return (out if show_changes else True) if out else False


def replace(
    path: str,
    pattern: str,
    repl: Any,
    count: int = 0,
    flags: Any = 8,
    bufsize: Any = 1,
    append_if_not_found: bool = False,
    prepend_if_not_found: bool = False,
    not_found_content: str | None = None,
    backup: Any = ".bak",
    dry_run: bool = False,
    search_only: bool = False,
    show_changes: bool = True,
    ignore_if_missing: bool = False,
    backslash_literal: bool = False,
    **kwargs: Any,
) -> str | bool:
    """Regex search and replace over ``path`` (Salt's ``file.replace``); the diff or False."""
    if ignore_if_missing and not os.path.isfile(os.path.expanduser(path)):
        return False
    if search_only:
        text = read(path)
        return lines.compile_re(pattern, lines.regex_flags(flags)).search(str(text)) is not None
    out = _edit(
        path,
        lambda old: lines.replace(
            old,
            pattern,
            str(repl),
            count,
            flags,
            append_if_not_found,
            prepend_if_not_found,
            not_found_content,
            backslash_literal,
        )[0],
        dry_run,
        backup,
    )
    return (out if show_changes else True) if out else False


def blockreplace(
    path: str,
    marker_start: str = "#-- start managed zone --",
    marker_end: str = "#-- end managed zone --",
    content: Any = "",
    append_if_not_found: bool = False,
    prepend_if_not_found: bool = False,
    backup: Any = ".bak",
    dry_run: bool = False,
    show_changes: bool = True,
    append_newline: Any = None,
    insert_before_match: str | None = None,
    insert_after_match: str | None = None,
    **kwargs: Any,
) -> str | bool:
    """Replace the block between two marker lines (Salt's ``file.blockreplace``); the diff or False."""
    out = _edit(
        path,
        lambda old: lines.blockreplace(
            old,
            str(marker_start),
            str(marker_end),
            None if content is None else str(content),
            append_if_not_found,
            prepend_if_not_found,
            append_newline,
            insert_before_match,
            insert_after_match,
        ),
        dry_run,
        backup,
    )
    return (out if show_changes else True) if out else False


def comment_line(
    path: str, regex: str, char: str = "#", cmnt: bool = True, backup: Any = ".bak", dry_run: bool = False
) -> str | bool:
    """Comment (``cmnt``) or uncomment the lines matching ``regex``; the diff or False."""
    fun = lines.comment if cmnt else lines.uncomment
    out = _edit(path, lambda old: fun(old, regex, char), dry_run, backup)
    return out or False


def comment_state(path: str, regex: str, char: str = "#") -> dict[str, bool]:
    """Which of ``regex`` uncommented / commented out by ``char`` occur in ``path`` (briny)."""
    text = str(read(path))
    rx = lines.compile_re(regex)
    plain = any(rx.search(ln) and not lines.commented(ln, regex, char) for ln in text.splitlines())
    hidden = any(lines.commented(ln, regex, char) for ln in text.splitlines())
    return {"uncommented": plain, "commented": hidden}


def keyvalue_edit(
    path: str,
    key_values: dict[str, Any],
    separator: str = "=",
    append_if_not_found: bool = False,
    uncomment: str | None = None,
    key_ignore_case: bool = False,
    value_ignore_case: bool = False,
    count: int = 1,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Set ``key SEP value`` lines (briny, behind ``file.keyvalue``): ``{"diff": [...], "changed": N}``."""
    path = os.path.expanduser(path)
    try:
        old = str(read(path))
    except CommandExecutionError:
        raise CommandExecutionError(f"unable to open {path}") from None
    new, dlines, changed = lines.keyvalue(
        old, key_values, separator, append_if_not_found, uncomment, key_ignore_case, value_ignore_case, count
    )
    if new != old and not dry_run:
        managed.write(path, new.encode("utf-8"))
    return {"diff": dlines, "changed": changed}
