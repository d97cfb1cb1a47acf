"""The heart of ``file.managed``: fetch and verify the source, compare, write.

Runs on the managed host, called by the ``file`` execution module
(``get_managed``, ``check_managed_changes``, ``manage_file``). The module
hands in what needs the loader (fetching ``salt://`` files, rendering
templates, the cache directory) as plain callables and values.

What Salt 3007 does and this reproduces: a new file is created ``0600``
when a ``mode`` is asked for (then set), otherwise from the umask; the
changes name ``user``/``group``/``mode`` only where they differ from what
was created; a file from a ``source`` also reports its ``mode``; a
``source_hash`` is checked for sources that are not ``salt://`` and never
in test mode; ``backup: minion`` copies the old file into
``cachedir/file_backup``. Writes go through a temporary file in the target's
folder and ``os.replace``; a symlink at ``name`` is followed only with
``follow_symlinks`` (Salt's default), otherwise replaced by the file.
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import Any, Callable

from briny.common.exceptions import BrinyError, HashError

from . import diff, perms, remote, tree

log = logging.getLogger(__name__)
TEST_NOTE = "\nNote: No changes made, actual changes may\nbe different due to other states."

Cache = Callable[[str, str], "str | bool"]


def source_items(source: Any) -> list[tuple[str, str | None]]:
    """(url, hash) for each candidate of ``source`` (a string, list of strings or of {url: hash})."""
    items = source if isinstance(source, list) else [source]
    out: list[tuple[str, str | None]] = []
    for item in items:
        if isinstance(item, dict):
            out.extend((str(k), None if v is None else str(v)) for k, v in item.items())
        elif item not in (None, ""):
            out.append((str(item), None))
    return out


def local_path(src: str) -> str:
    return src[len("file://") :] if src.startswith("file://") else src


def resolve(
    source: Any, source_hash: Any, saltenv: str, cache: Cache, probe: Callable[[str], bool] | None = None
) -> tuple[str, str | None, str, str]:
    """(url, hash, local copy, error) for the first source that exists.

    A remote source (``http(s)://``, ``ftp://``) comes back with no local copy (the caller
    downloads it, see :mod:`.remote`): alone it is taken as it is, in a list it must answer
    ``probe`` (Salt sends a ``HEAD``)."""
    items = source_items(source)
    for src, shash in items:
        want = shash if shash is not None else (source_hash or None)
        if remote.is_remote(src):
            if len(items) == 1 or (probe is not None and probe(src)):
                return src, want, "", ""
            continue
        local = (
            cache(src, saltenv)
            if src.startswith("salt://")
            else (local_path(src) if os.path.isabs(local_path(src)) and os.path.isfile(local_path(src)) else "")
        )
        if local:
            return src, want, str(local), ""
    if len(items) != 1:
        return "", None, "", "none of the specified sources were found"
    src = items[0][0]
    if src.startswith("salt://"):
        return "", None, "", f"Source file {src} not found in saltenv '{saltenv}'"
    return "", None, "", f"Local file source {local_path(src)} does not exist"


def source_sum(
    source_hash: Any, source: str, saltenv: str, cache: Cache, source_hash_name: str | None = None
) -> dict[str, str]:
    """The ``{"hash_type", "hsum"}`` ``source_hash`` stands for (raises HashError)."""
    parsed = diff.parse_hash(str(source_hash))
    if parsed is not None:
        return parsed
    where = str(source_hash)
    if remote.is_remote(where):
        local = cache(where, saltenv)  # a failed download raises FileServerError, as Salt's does
        if not local:
            raise HashError(f"Source hash file {remote.redact(where)} not found")
    else:
        local = (
            cache(where, saltenv)
            if where.startswith("salt://")
            else (local_path(where) if os.path.isfile(local_path(where)) else "")
        )
    if not local:
        raise HashError(diff.INVALID_FORMAT.format(source_hash))
    with open(str(local), encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    return diff.hash_from_text(text, source_hash, os.path.basename(source.split("?")[0]), source_hash_name)


def verify(name: str, data: bytes, sums: dict[str, str] | None) -> str:
    """Salt's mismatch comment, or "" when ``data`` has the expected hash."""
    if not sums:
        return ""
    actual = diff.hash_bytes(data, sums["hash_type"])
    return "" if actual == sums["hsum"] else diff.mismatch(name, sums, actual)


def target_of(name: str, follow_symlinks: bool) -> tuple[str, bool]:
    """(path to write, whether something that counts as the file is there)."""
    if os.path.islink(name):
        if follow_symlinks:
            real = os.path.realpath(name)
            return real, os.path.exists(real)
        return name, os.path.exists(name)
    return name, os.path.lexists(name)


def check_changes(
    name: str,
    data: bytes | None,
    user: Any,
    group: Any,
    mode: str | None,
    show_changes: bool = True,
    follow_symlinks: bool = True,
    replace: bool = True,
) -> tuple[Any, dict[str, Any], str]:
    """Test mode: (result, changes, comment) as Salt predicts them."""
    target, present = target_of(name, follow_symlinks)
    if not present:
        return None, {"newfile": name}, f"The file {name} is set to be changed" + TEST_NOTE
    changes: dict[str, Any] = {}
    managed = data is not None and replace
    if managed and data is not None:
        with open(target, "rb") as fh:
            old = fh.read()
        if old != data:
            changes["diff"] = diff.unified(old, data) if show_changes else "<show_changes=False>"
    changes.update(perms.perm_changes(target, user, group, mode))
    if not changes:
        return True, {}, (f"The file {name} is in the correct state" if managed else f"File {name} not updated")
    if not managed:
        return (
            None,
            changes,
            (f"File {name} will be updated with permissions {mode} from its current state of {perms.mode_of(target)}"),
        )
    return None, changes, f"The file {name} is set to be changed" + TEST_NOTE


def write(
    path: str,
    data: bytes,
    mode: str | None = None,
    tmp_dir: str | None = None,
    owner: tuple[Any, Any] | None = None,
    exact_mode: str | None = None,
) -> None:
    """Replace ``path`` atomically with ``data``; keeps an existing file's owner and mode.

    A new file gets ``0600`` when a ``mode`` is coming (Salt does the same),
    else 0666 minus the umask. ``owner`` (user, group) and ``exact_mode`` are
    set on the temporary file before the rename. The temporary file is made
    with ``O_EXCL`` next to ``path`` (``tmp_dir`` elsewhere could not be
    renamed atomically, so it is not used for the write).
    """
    folder = os.path.dirname(path) or "."
    try:
        old = os.lstat(path) if os.path.lexists(path) and not os.path.islink(path) else None
    except OSError:
        old = None
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".briny", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if old is not None:
            os.chmod(tmp, old.st_mode & 0o7777)
            if os.geteuid() == 0:
                os.chown(tmp, old.st_uid, old.st_gid)
                os.chmod(tmp, old.st_mode & 0o7777)
        elif mode is not None:
            os.chmod(tmp, 0o600)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        if owner and (owner[0] not in (None, "") or owner[1] not in (None, "")):
            perms.apply_perms(tmp, {k: v for k, v in zip(("user", "group"), owner) if v not in (None, "")})
        if exact_mode is not None:
            os.chmod(tmp, int(exact_mode, 8))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def manage(
    name: str,
    data: bytes | None,
    user: Any = None,
    group: Any = None,
    mode: str | None = None,
    from_source: bool = False,
    sums: dict[str, str] | None = None,
    backup: str = "",
    cachedir: str = "",
    makedirs: bool = False,
    dir_mode: str | None = None,
    show_changes: bool = True,
    follow_symlinks: bool = True,
    replace: bool = True,
    tmp_dir: str | None = None,
) -> dict[str, Any]:
    """Make the file so (live); returns ``{"result", "changes", "comment"}``."""
    ret: dict[str, Any] = {"result": False, "changes": {}, "comment": ""}
    missing = perms.missing_owner(user, group)
    if missing:
        ret["comment"] = missing
        return ret
    target, present = target_of(name, follow_symlinks)
    changes: dict[str, Any] = {}
    try:
        if not present:
            parent = os.path.dirname(target)
            if not os.path.isdir(parent):
                if not makedirs:
                    ret["comment"] = "Parent directory not present"
                    return ret
                tree.makedirs_perms(parent, user, group, dir_mode or dir_mode_for(mode))
            if data is not None:
                bad = verify(name, data, sums)
                if bad:
                    ret["comment"] = bad
                    return ret
            write(target, data or b"", mode, tmp_dir)
            if data is None:
                changes["new"] = f"file {name} created"
                ret["comment"] = "Empty file"
            else:
                changes["diff"] = "New file"
                ret["comment"] = f"File {name} updated"
            made = perms.mode_of(target)
            changes.update(perms.perm_changes(target, user, group, mode))
            perms.apply_perms(target, changes)
            if from_source and mode is None:
                changes["mode"] = made
            ret.update(result=True, changes=changes)
            return ret
        managed = data is not None and replace
        if managed and data is not None:
            with open(target, "rb") as fh:
                old = fh.read()
            if old != data:
                bad = verify(name, data, sums)
                if bad:
                    ret["comment"] = bad
                    return ret
                changes["diff"] = diff.unified(old, data) if show_changes else "<show_changes=False>"
                if backup == "minion" and cachedir:
                    tree.backup(target, cachedir)
                write(target, data, mode, tmp_dir)
        pch = perms.perm_changes(target, user, group, mode)
        perms.apply_perms(target, pch)
        changes.update(pch)
    except (OSError, BrinyError) as exc:
        ret["comment"] = f"Unable to manage file: {getattr(exc, 'strerror', None) or exc}"
        ret["changes"] = changes
        return ret
    if not changes:
        ret.update(
            result=True,
            comment=(
                f"File {name} is in the correct state"
                if managed
                else f"File {name} exists with proper permissions. No changes made."
            ),
        )
        return ret
    ret.update(result=True, changes=changes, comment=f"File {name} updated" if managed else "")
    return ret


def dir_mode_for(mode: Any) -> str | None:
    """Salt's folder mode for ``makedirs`` when only the file's ``mode`` is given:
    each non-zero digit gains the execute bit, so the folders stay listable (0600 -> 700)."""
    if mode is None:
        return None
    digits = [d for d in str(mode).replace("0o", "0")][-3:]
    return "".join(str(int(d) | 1) if d != "0" else d for d in digits)
