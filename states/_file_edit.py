"""Text-editing functions of the ``file`` state module: append, prepend, line, replace,
blockreplace, comment, uncomment, keyvalue.

Runs on the host applying states. A private file of ``states/file.py``, which
imports these functions and so exposes them as its own; loaded with that
module's dunders (see :mod:`briny.common.loader`).
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from typing import Any

from briny.common.exceptions import BrinyError

from ._file_accumulated import _block_content
from ._file_common import _env, _err, _fail, _salt, _start
from ._access import _testing

log = logging.getLogger(__name__)


def _chunks_of(text: Any) -> list[str]:
    """Each item of ``text`` (a string or a list of them) is one chunk, as Salt matches them."""
    return [str(chunk) for chunk in (text if isinstance(text, list) else [text])]


def _source_list(source: Any, sources: Any) -> tuple[list[str], str]:
    """(the sources to read, in order; an error comment) from ``source`` and ``sources``."""
    if source and sources:
        return [], "source and sources are mutually exclusive"
    items = sources if sources else ([source] if source else [])
    if not isinstance(items, list):
        items = [items]
    return [str(s) for s in items], ""


def _source_texts(
    srcs: list[str], template: Any, defaults: Any, context: Any, saltenv: str, name: str
) -> tuple[list[str] | None, str]:
    """Each source's text (rendered with ``template``, Jinja by default, as Salt does), in order, or
    (None, the first that cannot be read)."""
    texts: list[str] = []
    for src in srcs:
        plan = _salt("managed_data")(
            name, source=src, template=template or None, defaults=defaults, context=context, saltenv=saltenv
        )
        if plan["data"] is None:
            if plan["comment"]:
                log.error("file.append/prepend: %s: %s", src, plan["comment"])
            return None, src
        texts.append(plan["data"].decode("utf-8", errors="replace"))
    return texts, ""


def _unsupported(ret: dict[str, Any], **given: Any) -> None:
    """Name the arguments briny takes but does not act on, in the result's warnings."""
    named = [key for key, value in given.items() if value]
    if named:
        ret.setdefault("warnings", []).append(f"briny does not support {', '.join(named)} here; ignored")


def _chunk_present(chunk: str, old: str, ignore_whitespace: bool) -> bool:
    """Whether ``chunk`` is in the file already, as Salt searches: with ``ignore_whitespace``, its
    lines as whole consecutive lines of the file, whitespace runs alike; else the chunk as a regular
    expression anywhere in it (taken literally when it is not a valid one)."""
    if ignore_whitespace:
        want = [" ".join(line.split()) for line in chunk.splitlines()]
        have = [" ".join(line.split()) for line in old.splitlines()]
        if not want:
            return True
        return any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))
    try:
        return re.search(chunk, old, re.MULTILINE) is not None
    except re.error:
        return chunk in old


# -- append / prepend -----------------------------------------------------------------------------
def _add_lines(
    name: str,
    text: Any,
    srcs: list[str],
    makedirs: bool,
    ignore_whitespace: bool,
    saltenv: str,
    at_start: bool,
    render: tuple[Any, Any, Any] = ("jinja", None, None),
) -> dict[str, Any]:
    """Salt's order: the target (test mode: ``set to be created``; else it is created, empty, and
    its folders with ``makedirs``), then the sources (``Failed to load template file S`` for the
    first that cannot be read; they replace ``text``), then the chunks not already there."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    if not srcs and (text is None or text == [] or text == ""):
        return _fail(ret, "No text given to " + ("prepend" if at_start else "append"))
    if os.path.isdir(name):
        return _fail(ret, f"Specified target {name} is a directory")
    if not os.path.exists(name):
        if _testing():
            ret.update(result=None, changes={"new": name}, comment=f"File {name} is set to be created")
            return ret
        if not os.path.isdir(os.path.dirname(name)):
            if not makedirs:
                return _fail(ret, f"{name}: file not found")
            try:
                _salt("makedirs_perms")(os.path.dirname(name))
            except (BrinyError, OSError) as exc:
                return _fail(ret, str(exc))
        try:  # as Salt: the file exists from here on, whatever the sources hold
            _salt("atomic_write")(name, "")
        except (BrinyError, OSError) as exc:
            return _fail(ret, f"Unable to write {name}: {_err(exc)}")
        old = ""
    else:
        try:
            old = _salt("read")(name)
        except (BrinyError, OSError) as exc:
            return _fail(ret, str(exc))
    if srcs:
        texts, missing = _source_texts(srcs, *render, saltenv, name)
        if texts is None:  # Salt returns its source reader's own result here: named after the source
            ret.update(name=missing, data=[])
            return _fail(ret, f"Failed to load template file {missing}")
        chunks = texts
    else:
        chunks = _chunks_of(text)

    if at_start:
        wanted = [line for chunk in chunks for line in (chunk.splitlines() or [""])]
        norm = (lambda line: " ".join(line.split())) if ignore_whitespace else (lambda line: line)
        head = [norm(x) for x in old.splitlines()[: len(wanted)]]
        todo = [] if head == [norm(x) for x in wanted] else wanted
        new = "".join(f"{x}\n" for x in todo) + old
    else:
        todo = [
            line
            for chunk in chunks
            if not _chunk_present(chunk, old, ignore_whitespace)
            for line in (chunk.splitlines() or [""])
        ]
        new = old + ("\n" if old and not old.endswith("\n") else "") + "".join(f"{x}\n" for x in todo)
    if not todo:
        ret.update(result=True, comment=f"File {name} is in correct state")
        return ret
    if at_start:
        diff = _salt("get_diff_text")(old, new)
    else:
        diff = "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines()))
    if _testing():
        ret.update(result=None, changes={"diff": diff}, comment=f"File {name} is set to be updated")
        return ret
    try:
        _salt("atomic_write")(name, new)
    except (BrinyError, OSError) as exc:
        return _fail(ret, f"Unable to write {name}: {_err(exc)}")
    verb = "Prepended" if at_start else "Appended"
    ret.update(result=True, changes={"diff": diff}, comment=f"{verb} {len(todo)} lines")
    return ret


def append(
    name: str,
    text: Any = None,
    makedirs: bool = False,
    source: Any = None,
    source_hash: Any = None,
    template: Any = "jinja",
    sources: Any = None,
    source_hashes: Any = None,
    defaults: Any = None,
    context: Any = None,
    ignore_whitespace: bool = True,
    encoding: Any = None,
    encoding_errors: str = "strict",
    saltenv: str | None = None,
) -> dict[str, Any]:
    """Append each chunk of ``text`` (each item; or the text of each of ``source``/``sources``,
    rendered with ``template``) that the file does not already hold."""
    srcs, err = _source_list(source, sources)
    if err:
        return _fail(_start(name)[1], err)
    ret = _add_lines(
        name, text, srcs, makedirs, ignore_whitespace, _env(saltenv, {}), False, (template, defaults, context)
    )
    _unsupported(ret, source_hash=source_hash, source_hashes=source_hashes, encoding=encoding)
    return ret


def prepend(
    name: str,
    text: Any = None,
    makedirs: bool = False,
    source: Any = None,
    source_hash: Any = None,
    template: Any = "jinja",
    sources: Any = None,
    source_hashes: Any = None,
    defaults: Any = None,
    context: Any = None,
    header: Any = None,
    encoding: Any = None,
    encoding_errors: str = "strict",
    ignore_whitespace: bool = True,
    saltenv: str | None = None,
) -> dict[str, Any]:
    """Put ``text`` (or the text of ``source``/``sources``) at the start of the file unless it is
    already there."""
    srcs, err = _source_list(source, sources)
    if err:
        return _fail(_start(name)[1], err)
    ret = _add_lines(
        name, text, srcs, makedirs, ignore_whitespace, _env(saltenv, {}), True, (template, defaults, context)
    )
    _unsupported(ret, source_hash=source_hash, source_hashes=source_hashes, header=header, encoding=encoding)
    return ret


# -- text edits -----------------------------------------------------------------------------------
def _edit(ret: dict[str, Any], call: Any, would: str, made: str, show_changes: bool = True) -> dict[str, Any]:
    """Run an edit function twice (dry run, then live) and report as Salt's line/replace do."""
    try:
        out = call(True)
        if out and not _testing():
            out = call(False)
    except (BrinyError, OSError) as exc:
        return _fail(ret, _err(exc))
    if not out:
        ret.update(result=True, comment="No changes needed to be made")
        return ret
    ret["changes"] = {"diff": out if show_changes and isinstance(out, str) else "<show_changes=False>"}
    ret.update(result=None if _testing() else True, comment=would if _testing() else made)
    return ret


def line(
    name: str,
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
    user: Any = None,
    group: Any = None,
    file_mode: Any = None,
) -> dict[str, Any]:
    """Ensure, replace, delete or insert one line of a file."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    if not mode:
        return _fail(ret, "Mode was not defined. How to process the file?")
    if str(mode).lower() not in ("ensure", "replace", "delete", "insert"):
        return _fail(ret, f'Unknown mode: "{mode}"')
    if content is None and str(mode).lower() != "delete":
        return _fail(ret, "Content can only be empty if mode is ['delete']")
    if not os.path.isfile(name) and not create:
        return _fail(ret, f"{name}: file not found")

    def call(dry: bool) -> Any:
        return _salt("line")(
            name,
            content=content,
            match=match,
            mode=mode,
            location=location,
            before=before,
            after=after,
            show_changes=True,
            backup=backup,
            indent=indent,
            create=create,
            dry_run=dry,
        )

    ret = _edit(ret, call, "Changes would be made", "Changes were made", show_changes)
    if ret["result"] and not _testing() and (user or group or file_mode):
        try:
            ch = _salt("perm_changes")(name, user, group, file_mode)
            _salt("apply_perm_changes")(name, ch)
        except (BrinyError, OSError) as exc:
            return _fail(ret, _err(exc))
    return ret


def replace(
    name: str,
    pattern: str,
    repl: Any,
    count: int = 0,
    flags: Any = 8,
    bufsize: Any = 1,
    append_if_not_found: bool = False,
    prepend_if_not_found: bool = False,
    not_found_content: str | None = None,
    backup: Any = ".bak",
    show_changes: bool = True,
    ignore_if_missing: bool = False,
    backslash_literal: bool = False,
    **kwargs: Any,
) -> dict[str, Any]:
    """Regex search and replace in a file."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    if not os.path.isfile(name):
        if ignore_if_missing:
            ret.update(result=True, comment=f"{name} doesn't exist, so nothing was replaced")
            return ret
        return _fail(ret, f"{name}: file not found")

    def call(dry: bool) -> Any:
        return _salt("replace")(
            name,
            pattern,
            repl,
            count=count,
            flags=flags,
            bufsize=bufsize,
            append_if_not_found=append_if_not_found,
            prepend_if_not_found=prepend_if_not_found,
            not_found_content=not_found_content,
            backup=backup,
            dry_run=dry,
            show_changes=True,
            backslash_literal=backslash_literal,
        )

    return _edit(ret, call, "Changes would have been made", "Changes were made", show_changes)


def blockreplace(
    name: str,
    marker_start: str = "#-- start managed zone --",
    marker_end: str = "#-- end managed zone --",
    source: Any = None,
    source_hash: Any = None,
    template: str = "jinja",
    sources: Any = None,
    source_hashes: Any = None,
    defaults: Any = None,
    context: Any = None,
    content: Any = "",
    append_if_not_found: bool = False,
    prepend_if_not_found: bool = False,
    backup: Any = ".bak",
    show_changes: bool = True,
    append_newline: Any = None,
    insert_before_match: str | None = None,
    insert_after_match: str | None = None,
    saltenv: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Keep the text between two marker lines of a file equal to ``content`` (or ``source``)."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    if not os.path.isfile(name):
        return _fail(ret, f"{name}: file not found")
    if source or sources:
        plan = _salt("managed_data")(
            name,
            source=source or sources,
            template=template if source else None,
            context=context,
            defaults=defaults,
            saltenv=_env(saltenv, kwargs),
        )
        if plan["data"] is None:
            return _fail(ret, plan["comment"] or "Source file not found")
        content = plan["data"].decode("utf-8", errors="replace")
    content = _block_content(name, content)  # file.accumulated's texts for this block

    def call(dry: bool) -> Any:
        return _salt("blockreplace")(
            name,
            marker_start,
            marker_end,
            content=content,
            append_if_not_found=append_if_not_found,
            prepend_if_not_found=prepend_if_not_found,
            backup=backup,
            dry_run=dry,
            show_changes=True,
            append_newline=append_newline,
            insert_before_match=insert_before_match,
            insert_after_match=insert_after_match,
        )

    ret = _edit(ret, call, "Changes would be made", "Changes were made", show_changes)
    if ret["result"] is False and "Markers were not found" in ret["comment"]:
        ret["comment"] = f"Encountered error managing block: {ret['comment']}. See the log for details."
    return ret


def comment(
    name: str, regex: str, char: str = "#", backup: Any = ".bak", ignore_missing: bool = False, **kwargs: Any
) -> dict[str, Any]:
    """Comment out the lines matching ``regex``."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    if not os.path.isfile(name):
        return _fail(ret, f"{name}: file not found")
    unanchored = str(regex).lstrip("^").rstrip("$")
    try:
        seen = _salt("comment_state")(name, regex, char)
    except BrinyError as exc:
        return _fail(ret, str(exc))
    if not seen["uncommented"]:
        if seen["commented"] or ignore_missing:
            ret.update(
                result=True,
                comment="Pattern already commented"
                if seen["commented"]
                else f"{unanchored}: Pattern not found and ignore_missing set to True",
            )
            return ret
        return _fail(ret, f"{unanchored}: Pattern not found")
    if _testing():
        ret.update(result=None, changes={name: "updated"}, comment=f"File {name} is set to be updated")
        return ret
    try:
        diff = _salt("comment_line")(name, regex, char, True, backup)
    except (BrinyError, OSError) as exc:
        return _fail(ret, _err(exc))
    ret.update(result=True, changes={"diff": diff} if diff else {}, comment="Commented lines successfully")
    return ret


def uncomment(name: str, regex: str, char: str = "#", backup: Any = ".bak") -> dict[str, Any]:
    """Uncomment the lines where ``char`` comments out ``regex``."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    if not os.path.isfile(name):
        return _fail(ret, f"{name}: file not found")
    try:
        seen = _salt("comment_state")(name, regex, char)
    except BrinyError as exc:
        return _fail(ret, str(exc))
    if not seen["commented"]:
        if seen["uncommented"]:
            ret.update(result=True, comment="Pattern already uncommented")
            return ret
        return _fail(ret, f"{regex}: Pattern not found")
    if _testing():
        ret.update(result=None, changes={name: "updated"}, comment=f"File {name} is set to be updated")
        return ret
    try:
        diff = _salt("comment_line")(name, regex, char, False, backup)
    except (BrinyError, OSError) as exc:
        return _fail(ret, _err(exc))
    ret.update(result=True, changes={"diff": diff} if diff else {}, comment="Uncommented lines successfully")
    return ret


def keyvalue(
    name: str,
    key: str | None = None,
    value: Any = None,
    key_values: dict[str, Any] | None = None,
    separator: str = "=",
    append_if_not_found: bool = False,
    uncomment: str | None = None,
    key_ignore_case: bool = False,
    value_ignore_case: bool = False,
    count: int = 1,
    show_changes: bool = True,
    **kwargs: Any,
) -> dict[str, Any]:
    """Set ``key SEPARATOR value`` lines of a file."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    if key_values is None:
        if key is None:
            return _fail(ret, "file.keyvalue: key and value not supplied")
        key_values = {key: value}
    elif key is not None:
        return _fail(ret, "file.keyvalue: key and key_values are mutually exclusive")
    if not isinstance(key_values, dict):
        return _fail(ret, "file.keyvalue key and value not supplied")
    try:
        out = _salt("keyvalue_edit")(
            name,
            key_values,
            separator,
            append_if_not_found,
            uncomment,
            key_ignore_case,
            value_ignore_case,
            count,
            dry_run=_testing(),
        )
    except (BrinyError, OSError) as exc:
        return _fail(ret, _err(exc))
    ret["result"] = True
    if not out["changed"]:
        return ret
    diff = "".join(f"{x}\n" for x in out["diff"])
    if show_changes:
        ret["changes"] = {"diff": diff}
    if _testing():
        ret["result"] = None
        ret["comment"] = f"File {name} is set to be changed ({out['changed']} lines)\nPredicted diff:\n" + "".join(
            f"\r\t\t{x}\n" for x in out["diff"]
        )
    else:
        ret["comment"] = f"Changed {out['changed']} lines"
    return ret
