"""The ``file`` state module (first slice): files and directories on this host.

Runs wherever states run (``briny-call``, the minion). The disk work goes
through the ``file`` execution module (``__salt__["file.*"]``) and ``salt://``
sources through ``__salt__["cp.cache_file"]``; this module decides what has
to change and reports it as Salt 3007 does (comments, ``changes`` with
Salt's unified diff, ``New file``, test-mode predictions).

Provided: ``managed`` (``contents``, ``contents_pillar``, ``contents_grains``,
``source`` as ``salt://``, local path or a list of them, ``user``, ``group``,
``mode``, ``makedirs``, ``dir_mode``, ``replace``, ``show_changes``,
``create``, ``follow_symlinks``), ``directory``, ``absent``, ``exists``,
``missing``, ``touch`` and ``append`` (``text``). ``source_hash``,
templates, ``recurse`` and ``clean`` come with a later slice and fail
clearly when asked for.

Writes are atomic (a temporary file in the destination's folder, then
``os.replace``). A symlink at a managed path is followed to its target, as
Salt's ``follow_symlinks`` default says; with ``follow_symlinks: False`` the
link itself is replaced and its target is never written.

On purpose unlike Salt: a bad ``mode`` fails before anything is written
(Salt creates the file, then fails), a failed ``file.directory`` reports no
changes, and ``file.append`` without ``text`` fails (Salt appends "None").
"""

from __future__ import annotations

import difflib
import os
from typing import Any

from briny.common.exceptions import BrinyError

_TEST_NOTE = "\nNote: No changes made, actual changes may\nbe different due to other states."


def _testing() -> bool:
    return bool(__opts__.get("test"))  # type: ignore[name-defined]  # noqa: F821


def _salt(fun: str) -> Any:
    return __salt__[f"file.{fun}"]  # type: ignore[name-defined]  # noqa: F821


def _ret(name: str) -> dict[str, Any]:
    return {"name": name, "changes": {}, "result": False, "comment": ""}


def _fail(ret: dict[str, Any], comment: str) -> dict[str, Any]:
    ret["result"] = False
    ret["comment"] = comment
    return ret


def _not_absolute(name: str) -> str | None:
    if not name or not os.path.isabs(name):
        return f"Specified file {name} is not an absolute path"
    return None


def _missing_owner(user: Any, group: Any) -> str:
    """Salt's comment for owners that do not exist on this host ("" if all do)."""
    comment = ""
    if user not in (None, "") and _salt("user_to_uid")(user) == "":
        comment += f"User {user} is not available "
    if group not in (None, "") and _salt("group_to_gid")(group) == "":
        comment += f"Group {group} is not available"
    return comment


def _norm_mode(mode: Any) -> str | None:
    return _salt("normalize_mode")(mode)


def _perm_changes(path: str, user: Any, group: Any, mode: str | None) -> dict[str, Any]:
    """What ``user``/``group``/``mode`` would change on ``path``, in Salt's keys."""
    st = _salt("stats")(path)
    changes: dict[str, Any] = {}
    if user not in (None, "") and _salt("user_to_uid")(user) != st["uid"]:
        changes["user"] = user
    if group not in (None, "") and _salt("group_to_gid")(group) != st["gid"]:
        changes["group"] = group
    if mode is not None and mode != st["mode"]:
        changes["mode"] = mode
    return changes


def _apply_perms(path: str, changes: dict[str, Any]) -> str | None:
    """Apply the owner/mode part of ``changes``; an error comment or None."""
    if "user" in changes or "group" in changes:
        err = _salt("chown")(path, changes.get("user"), changes.get("group"))
        if err:
            return f"Failed to change ownership of {path}: {err.strip()}"
    if "mode" in changes:
        new = _salt("set_mode")(path, changes["mode"])
        if new != changes["mode"]:
            return f"Failed to change mode to {changes['mode']}"
    return None


def _lookup(data: Any, key: str, delimiter: str = ":") -> tuple[bool, Any]:
    for part in str(key).split(delimiter):
        if isinstance(data, dict) and part in data:
            data = data[part]
        else:
            return False, None
    return True, data


def _as_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "\n".join(str(v) for v in value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _sources(source: Any) -> list[str]:
    items = source if isinstance(source, list) else [source]
    out: list[str] = []
    for item in items:
        if isinstance(item, dict):
            out.extend(str(k) for k in item)
        elif item not in (None, ""):
            out.append(str(item))
    return out


def _fetch_source(source: Any, saltenv: str) -> tuple[bytes | None, str]:
    """(bytes of the first source that exists, Salt's error comment).

    The comment starts with ``!`` when Salt prefixes it with "Unable to
    manage file: " under test mode too.
    """
    candidates = _sources(source)
    for src in candidates:
        if src.startswith("salt://"):
            local = __salt__["cp.cache_file"](src, saltenv)  # type: ignore[name-defined]  # noqa: F821
        else:
            path = src[len("file://"):] if src.startswith("file://") else src
            local = path if os.path.isabs(path) and os.path.isfile(path) else False
        if local:
            try:
                with open(str(local), "rb") as fh:
                    return fh.read(), ""
            except OSError as exc:
                return None, f"Unable to read source file {src}: {exc.strerror}"
    if len(candidates) != 1:
        return None, "!none of the specified sources were found"
    src = candidates[0]
    if src.startswith("salt://"):
        return None, f"Source file {src} not found in saltenv '{saltenv}'"
    return None, f"Local file source {src} does not exist"


def _is_binary(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _diff(old: bytes, new: bytes) -> str:
    if _is_binary(old) or _is_binary(new):
        return "Replace binary file"
    return "".join(difflib.unified_diff(old.decode("utf-8").splitlines(True),
                                        new.decode("utf-8").splitlines(True)))


def managed(name: str, source: Any = None, source_hash: str = "", user: Any = None, group: Any = None,
            mode: Any = None, makedirs: bool = False, dir_mode: Any = None, replace: bool = True,
            contents: Any = None, contents_pillar: str | None = None, contents_grains: str | None = None,
            contents_newline: bool = True, contents_delimiter: str = ":", show_changes: bool = True,
            create: bool = True, follow_symlinks: bool = True, template: str | None = None,
            saltenv: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """Make ``name`` a file with the given contents, owner and mode."""
    name = os.path.expanduser(str(name)) if name else ""
    ret = _ret(name)
    bad = _not_absolute(name)
    if bad:
        return _fail(ret, bad)
    given = [x for x in (contents, contents_pillar, contents_grains) if x is not None]
    if source and given:
        return _fail(ret, "'source' cannot be used in combination with 'contents', "
                          "'contents_pillar', or 'contents_grains'")
    if len(given) > 1:
        return _fail(ret, "Only one of 'contents', 'contents_pillar', and 'contents_grains' is permitted")
    if template:
        return _fail(ret, f"Templates ({template}) in file.managed are not supported yet")
    try:
        mode = _norm_mode(mode)
        dir_mode = _norm_mode(dir_mode)
    except BrinyError as exc:
        return _fail(ret, str(exc))
    env = saltenv or kwargs.get("__env__") or globals().get("__env__") or "base"

    # the desired content, or None for "leave the content alone"
    data: bytes | None = None
    if contents_pillar is not None or contents_grains is not None:
        key = contents_pillar if contents_pillar is not None else contents_grains
        store = __pillar__ if contents_pillar is not None else __grains__  # type: ignore[name-defined]  # noqa: F821
        found, value = _lookup(store, str(key), contents_delimiter)
        if not found:
            what = "Pillar" if contents_pillar is not None else "Grain"
            return _fail(ret, f"{what} {key} does not exist")
        contents = _as_text(value)
    if contents is not None:
        text = _as_text(contents)
        if contents_newline and not text.endswith("\n"):
            text += "\n"
        data = text.encode("utf-8")
    elif source:
        data, err = _fetch_source(source, str(env))
        if data is None:
            if err.startswith("!") or not _testing():
                err = "Unable to manage file: " + err.lstrip("!")
            return _fail(ret, err)

    target = os.path.realpath(name) if follow_symlinks and os.path.islink(name) else name
    if os.path.isdir(target) and not (not follow_symlinks and os.path.islink(name)):
        return _fail(ret, f"Specified target {name} is a directory")
    exists = os.path.lexists(target) and not (not follow_symlinks and os.path.islink(target))

    if not exists:
        if not create:
            ret.update(result=True, comment=f"File {name} is not present and is not set for creation")
            return ret
        if _testing():
            ret.update(result=None, changes={"newfile": name}, comment=f"The file {name} is set to be changed" + _TEST_NOTE)
            return ret
        missing = _missing_owner(user, group)
        if missing:
            return _fail(ret, missing)
        parent = os.path.dirname(target)
        if not os.path.isdir(parent):
            if not makedirs:
                return _fail(ret, "Parent directory not present")
            try:
                _salt("makedirs_perms")(parent, user, group, dir_mode)
            except BrinyError as exc:
                return _fail(ret, f"Unable to create the parent directory of {name}: {exc}")
        try:
            _salt("atomic_write")(target, data if data is not None else b"", mode, False, user, group)
        except (BrinyError, OSError) as exc:
            return _fail(ret, f"Unable to manage file: {getattr(exc, 'strerror', None) or exc}")
        if data is None:
            ret["changes"] = {"new": f"file {name} created"}
            ret["comment"] = "Empty file"
        else:
            ret["changes"] = {"diff": "New file"}
            ret["comment"] = f"File {name} updated"
        perms = _perm_changes(target, user, group, mode)
        err = _apply_perms(target, perms)
        if err:
            return _fail(ret, err)
        if source and data is not None:
            ret["changes"]["mode"] = _salt("get_mode")(target)
        ret["result"] = True
        return ret

    if not os.path.isfile(target):
        return _fail(ret, f"Specified target {name} exists and is not a regular file")
    changes: dict[str, Any] = {}
    content_managed = data is not None and replace
    if content_managed:
        try:
            with open(target, "rb") as fh:
                old = fh.read()
        except OSError as exc:
            return _fail(ret, f"Unable to read {name}: {exc.strerror}")
        if old != data:
            changes["diff"] = _diff(old, data) if show_changes else "<show_changes=False>"
    perms = _perm_changes(target, user, group, mode)
    changes.update(perms)
    if not changes:
        if data is None or not replace:
            ret["comment"] = (f"File {name} not updated" if _testing()
                              else f"File {name} exists with proper permissions. No changes made.")
        else:
            ret["comment"] = (f"The file {name} is in the correct state" if _testing()
                              else f"File {name} is in the correct state")
        ret["result"] = True
        return ret
    if _testing():
        comment = f"The file {name} is set to be changed" + _TEST_NOTE
        if not content_managed and "mode" in changes:
            current = _salt("get_mode")(target)
            comment = f"File {name} will be updated with permissions {mode} from its current state of {current}"
        ret.update(result=None, changes=changes, comment=comment)
        return ret
    missing = _missing_owner(user, group)
    if missing:
        return _fail(ret, missing)
    if "diff" in changes:
        try:
            _salt("atomic_write")(target, data, mode, False, user, group)
        except (BrinyError, OSError) as exc:
            return _fail(ret, f"Unable to manage file: {getattr(exc, 'strerror', None) or exc}")
    ret["changes"] = changes
    err = _apply_perms(target, perms)
    if err:
        return _fail(ret, err)
    # Salt says nothing when only owner or mode were managed
    ret.update(result=True, comment=f"File {name} updated" if content_managed else "")
    return ret


def directory(name: str, user: Any = None, group: Any = None, recurse: Any = None, dir_mode: Any = None,
              file_mode: Any = None, makedirs: bool = False, clean: bool = False, mode: Any = None,
              allow_symlink: bool = True, follow_symlinks: bool = False, force: bool = False,
              **kwargs: Any) -> dict[str, Any]:
    """Make ``name`` a directory with the given owner and mode."""
    name = os.path.expanduser(str(name)) if name else ""
    ret = _ret(name)
    bad = _not_absolute(name)
    if bad:
        return _fail(ret, bad)
    if recurse or clean:
        return _fail(ret, "file.directory: 'recurse' and 'clean' are not supported yet")
    try:
        mode = _norm_mode(dir_mode if dir_mode is not None else mode)
    except BrinyError as exc:
        return _fail(ret, str(exc))
    is_link_dir = os.path.islink(name) and os.path.isdir(name) and allow_symlink
    if os.path.lexists(name) and not os.path.isdir(name):
        kind = "symlink" if os.path.islink(name) else "file"
        return _fail(ret, f"Specified location {name} exists and is a {kind}")
    if os.path.islink(name) and not is_link_dir:
        return _fail(ret, f"Specified location {name} exists and is a symlink")

    if not os.path.isdir(name):
        new = {name: {"directory": "new"}}
        if _testing():
            ret.update(result=None, changes=new,
                       comment=f"The following files will be changed:\n{name}: directory - new\n")
            return ret
        missing = _missing_owner(user, group)
        if missing:
            return _fail(ret, missing)
        if not os.path.isdir(os.path.dirname(name.rstrip("/")) or "/") and not makedirs:
            return _fail(ret, f"No directory to create {name} in")
        try:
            _salt("makedirs_perms")(name, user, group, mode)
        except (BrinyError, OSError) as exc:
            return _fail(ret, f"Failed to create directory {name}: {exc}")
        ret.update(result=True, changes=new, comment="")
        return ret

    path = os.path.realpath(name) if is_link_dir else name
    perms = _perm_changes(path, user, group, mode)
    if not perms:
        ret.update(result=True, comment=f"The directory {name} is in the correct state")
        return ret
    if _testing():
        lines = "".join(f"{name}: {k} - {v}\n" for k, v in perms.items())
        ret.update(result=None, changes={name: perms}, comment="The following files will be changed:\n" + lines)
        return ret
    missing = _missing_owner(user, group)
    if missing:
        return _fail(ret, missing)
    err = _apply_perms(path, perms)
    if err:
        return _fail(ret, err)
    ret.update(result=True, changes={name: dict(perms), **perms}, comment=f"Directory {name} updated")
    return ret


def absent(name: str, **kwargs: Any) -> dict[str, Any]:
    """Make sure nothing is at ``name`` (a file, link or whole directory tree)."""
    name = os.path.expanduser(str(name)) if name else ""
    ret = _ret(name)
    bad = _not_absolute(name)
    if bad:
        return _fail(ret, bad)
    if os.path.normpath(name) == "/":
        return _fail(ret, 'Refusing to make "/" absent')
    if not os.path.lexists(name):
        ret.update(result=True, comment=f"File {name} is not present")
        return ret
    kind = "Directory" if os.path.isdir(name) and not os.path.islink(name) else "File"
    if _testing():
        ret.update(result=None, changes={"removed": name}, comment=f"{kind} {name} is set for removal")
        return ret
    try:
        _salt("remove")(name)
    except (BrinyError, OSError) as exc:
        return _fail(ret, str(exc))
    ret.update(result=True, changes={"removed": name}, comment=f"Removed {kind.lower()} {name}")
    return ret


def exists(name: str, **kwargs: Any) -> dict[str, Any]:
    """Succeed when something is at ``name``; never changes anything."""
    ret = _ret(name)
    if not name:
        return _fail(ret, "Must provide name to file.exists")
    if os.path.lexists(os.path.expanduser(name)):
        ret.update(result=True, comment=f"Path {name} exists")
    else:
        ret["comment"] = f"Specified path {name} does not exist"
    return ret


def missing(name: str, **kwargs: Any) -> dict[str, Any]:
    """Succeed when nothing is at ``name``; never changes anything."""
    ret = _ret(name)
    if not name:
        return _fail(ret, "Must provide name to file.missing")
    if os.path.lexists(os.path.expanduser(name)):
        ret["comment"] = f"Specified path {name} exists"
    else:
        ret.update(result=True, comment=f"Path {name} is missing")
    return ret


def touch(name: str, atime: float | None = None, mtime: float | None = None, makedirs: bool = False,
          **kwargs: Any) -> dict[str, Any]:
    """Create ``name`` empty if missing, and set its access and modification times."""
    name = os.path.expanduser(str(name)) if name else ""
    ret = _ret(name)
    bad = _not_absolute(name)
    if bad:
        return _fail(ret, bad)
    present = os.path.exists(name)
    if _testing():
        if present:
            ret.update(result=True, changes={"new": name}, comment=f"File {name} exists and has the correct times")
        else:
            ret.update(result=None, changes={"new": name}, comment=f"File {name} is set to be created")
        return ret
    if os.path.isdir(name):
        return _fail(ret, f"Specified target {name} is a directory")
    parent = os.path.dirname(name)
    if not os.path.isdir(parent):
        if not makedirs:
            return _fail(ret, f"Directory not present to touch file {name}")
        try:
            _salt("makedirs_perms")(parent)
        except (BrinyError, OSError) as exc:
            return _fail(ret, str(exc))
    try:
        _salt("touch")(name, atime, mtime)
    except (BrinyError, OSError) as exc:
        return _fail(ret, f"Unable to touch {name}: {exc}")
    if present:
        ret.update(result=True, changes={"touched": name}, comment=f"Updated times on file {name}")
    else:
        ret.update(result=True, changes={"new": name}, comment=f"Created empty file {name}")
    return ret


def _append_diff(old: str, new: str) -> str:
    return "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines()))


def append(name: str, text: Any = None, makedirs: bool = False, source: Any = None,
           ignore_whitespace: bool = True, **kwargs: Any) -> dict[str, Any]:
    """Append each line of ``text`` that the file does not already contain."""
    name = os.path.expanduser(str(name)) if name else ""
    ret = _ret(name)
    bad = _not_absolute(name)
    if bad:
        return _fail(ret, bad)
    if source or kwargs.get("sources"):
        return _fail(ret, "file.append: 'source' is not supported yet; use 'text'")
    if text is None or text == [] or text == "":
        return _fail(ret, "No text given to append")
    chunks = text if isinstance(text, list) else [text]
    lines: list[str] = []
    for chunk in chunks:
        lines.extend(str(chunk).splitlines() or [""])
    if os.path.isdir(name):
        return _fail(ret, f"Specified target {name} is a directory")
    present = os.path.exists(name)
    if not present:
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
        old = ""
    else:
        try:
            old = _salt("read")(name)
        except (BrinyError, OSError) as exc:
            return _fail(ret, str(exc))

    def norm(line: str) -> str:
        return " ".join(line.split()) if ignore_whitespace else line

    have = {norm(line) for line in old.splitlines()}
    todo: list[str] = []
    for line in lines:
        if norm(line) not in have:
            todo.append(line)
            have.add(norm(line))
    if not todo:
        ret.update(result=True, comment=f"File {name} is in correct state")
        return ret
    new = old + ("\n" if old and not old.endswith("\n") else "") + "".join(f"{line}\n" for line in todo)
    diff = _append_diff(old, new)
    if _testing():
        ret.update(result=None, changes={"diff": diff}, comment=f"File {name} is set to be updated")
        return ret
    try:
        _salt("atomic_write")(name, new)
    except (BrinyError, OSError) as exc:
        return _fail(ret, f"Unable to append to {name}: {exc}")
    ret.update(result=True, changes={"diff": diff}, comment=f"Appended {len(todo)} lines")
    return ret
