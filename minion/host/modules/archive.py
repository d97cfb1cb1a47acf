"""Execution module ``archive``: list and extract tar and zip archives, safely.

Runs on the managed host. Archives are read with Python's :mod:`tarfile`
(plain, gzip, bzip2, xz) and :mod:`zipfile`; no external tool runs. A
``salt://`` name is fetched through ``cp.cache_file`` first.

Every member is checked before anything is written, and an archive with one
bad member is refused whole (:class:`CommandExecutionError` naming the
members): absolute names, names with a ``..`` component, symlinks or hard
links whose target leaves the destination, members reached through a
symlink member, and device or FIFO members. While extracting, a symlink
already on disk is never followed: an existing parent that is a symlink
stops the extraction, and a file replaces (never writes through) a link at
its place.

Members are written as tar's ``data`` filter would: no ownership taken
from the archive (files belong to whoever runs briny unless the caller
changes them), no setuid/setgid/sticky bits and no group/other write bits;
modification times are kept.

``list`` returns Salt 3007's shape (with ``verbose``: ``dirs``, ``files``,
``links``, ``top_level_dirs``, ``top_level_files``, ``top_level_links``,
directories with a trailing ``/``); ``extract`` returns the member names it
wrote, in archive order, as Salt reports them in ``extracted_files``.
"""

from __future__ import annotations

import logging
import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, IO, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

__func_alias__ = {"list_": "list"}
_CHUNK = 1 << 20


class _Member:
    """One archive member, normalized."""

    __slots__ = ("raw", "path", "kind", "target", "mode", "mtime", "info")

    def __init__(self, raw: str, path: str, kind: str, target: str, mode: int, mtime: float, info: Any) -> None:
        self.raw, self.path, self.kind, self.target = raw, path, kind, target
        self.mode, self.mtime, self.info = mode, mtime, info


def _local(name: str, saltenv: str) -> str:
    if str(name).startswith("salt://"):
        found = __salt__["cp.cache_file"](name, saltenv)
        if not found:
            raise CommandExecutionError(f"Unable to cache {name}")
        return str(found)
    path = str(name)[7:] if str(name).startswith("file://") else str(name)
    if not os.path.isfile(path):
        raise CommandExecutionError(f"{path} does not exist")
    return path


def guess_format(path: str) -> str | None:
    """``tar`` or ``zip`` from the content (then the name), or None."""
    try:
        if zipfile.is_zipfile(path):
            return "zip"
        if tarfile.is_tarfile(path):
            return "tar"
    except OSError:
        return None
    lower = path.lower()
    if lower.endswith(".zip"):
        return "zip"
    if any(
        lower.endswith(s)
        for s in (".tar", ".tgz", ".tbz", ".tbz2", ".txz", ".tar.gz", ".tar.bz2", ".tar.xz", ".tar.lzma")
    ):
        return "tar"
    return None


def _clean(raw: str) -> tuple[str, str | None]:
    """(relative path, problem) for a member name."""
    name = raw.replace("\\", "/") if "\\" in raw and "/" not in raw else raw
    if name.startswith("/"):
        return name, "absolute path"
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return name, "path climbs out of the destination"
    if "\x00" in name:
        return name, "NUL in name"
    return "/".join(parts), None


def _strip(path: str, count: int) -> str | None:
    parts = path.split("/")
    if count and len(parts) <= count:
        return None
    return "/".join(parts[count:]) if count else path


def _tar_members(tf: tarfile.TarFile) -> Iterator[tuple[str, str, str, int, float, Any]]:
    for ti in tf.getmembers():
        if ti.isdir():
            kind = "dir"
        elif ti.issym():
            kind = "link"
        elif ti.islnk():
            kind = "hardlink"
        elif ti.isreg():
            kind = "file"
        else:
            kind = "special"
        yield ti.name, kind, ti.linkname, ti.mode, float(ti.mtime), ti


def _zip_members(zf: zipfile.ZipFile) -> Iterator[tuple[str, str, str, int, float, Any]]:
    import time

    for zi in zf.infolist():
        mode = zi.external_attr >> 16
        if zi.is_dir():
            kind = "dir"
        elif mode and stat.S_ISLNK(mode):
            kind = "link"
        else:
            kind = "file"
        target = zf.read(zi).decode("utf-8", "replace") if kind == "link" else ""
        perm = stat.S_IMODE(mode) if mode else (0o755 if kind == "dir" else 0o644)
        yield zi.filename, kind, target, perm, time.mktime(zi.date_time + (0, 0, -1)), zi


@contextmanager
def _opened(path: str, fmt: str) -> Iterator[Any]:
    try:
        if fmt == "zip":
            with zipfile.ZipFile(path) as zf:
                yield zf
        else:
            with tarfile.open(path, "r:*") as tf:
                yield tf
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise CommandExecutionError(f"Unable to read archive {path}: {exc}") from None


def _members(handle: Any, fmt: str, strip_components: int) -> list[_Member]:
    """Every member, normalized; raises when any of them is unsafe."""
    rows = _zip_members(handle) if fmt == "zip" else _tar_members(handle)
    members: list[_Member] = []
    problems: list[str] = []
    for raw, kind, target, mode, mtime, info in rows:
        path, problem = _clean(raw)
        if problem:
            problems.append(f"{raw} ({problem})")
            continue
        stripped = _strip(path, strip_components) if path else None
        if not stripped:
            continue
        if kind == "special":
            problems.append(f"{raw} (device or FIFO members are not extracted)")
            continue
        if kind in ("link", "hardlink"):
            if not target or target.startswith("/"):
                problems.append(f"{raw} (link to an absolute path {target})")
                continue
            base = posixpath.dirname(stripped) if kind == "link" else ""
            if kind == "hardlink":
                cleaned, bad = _clean(target)
                target = _strip(cleaned, strip_components) or "" if not bad else ""
                if bad or not target:
                    problems.append(f"{raw} (hard link out of the archive: {info.linkname})")
                    continue
            resolved = posixpath.normpath(posixpath.join(base, target))
            if resolved == ".." or resolved.startswith("../"):
                problems.append(f"{raw} (link leaves the destination: {target})")
                continue
        members.append(_Member(raw, stripped, kind, target, mode, mtime, info))
    links = {m.path for m in members if m.kind == "link"}
    for m in members:
        parts = m.path.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in links:
                problems.append(f"{m.raw} (reached through the symlink {'/'.join(parts[:i])})")
                break
    if problems:
        raise CommandExecutionError(
            "Unsafe archive members, nothing was extracted: " + "; ".join(problems), info=problems
        )
    return members


def _strip_option(options: Any, strip_components: Any) -> int:
    count = strip_components
    for opt in str(options or "").split():
        for prefix in ("--strip-components=", "--strip="):
            if opt.startswith(prefix):
                count = opt[len(prefix) :]
    try:
        return int(count or 0)
    except (TypeError, ValueError):
        raise SaltInvocationError(f"Invalid strip_components: {count}") from None


def _format(path: str, archive_format: str | None) -> str:
    fmt = (archive_format or guess_format(path) or "").lower()
    if fmt not in ("tar", "zip"):
        raise CommandExecutionError(f"Unsupported archive format {fmt or 'unknown'} for {path} (tar and zip only)")
    return fmt


def list_(
    name: str,
    archive_format: str | None = None,
    options: Any = None,
    strip_components: Any = None,
    clean: bool = False,
    verbose: bool = False,
    saltenv: str = "base",
    **kwargs: Any,
) -> Any:
    """The members of the archive ``name``; with ``verbose`` sorted by kind and top level."""
    path = _local(name, saltenv)
    fmt = _format(path, archive_format)
    with _opened(path, fmt) as handle:
        members = _members(handle, fmt, _strip_option(options, strip_components))
    if not verbose:
        return [m.path + ("/" if m.kind == "dir" else "") for m in members]
    out: dict[str, list[str]] = {
        "dirs": [],
        "files": [],
        "links": [],
        "top_level_dirs": [],
        "top_level_files": [],
        "top_level_links": [],
    }
    for m in members:
        parts = m.path.split("/")
        if m.kind == "dir":
            out["dirs"].append(m.path + "/")
        elif m.kind == "link":
            out["links"].append(m.path)
        else:
            out["files"].append(m.path)
        if len(parts) > 1 or m.kind == "dir":
            top = parts[0] + "/"
            if top not in out["top_level_dirs"]:
                out["top_level_dirs"].append(top)
            if len(parts) > 1 and top not in out["dirs"]:
                out["dirs"].append(top)
        elif m.kind == "link":
            out["top_level_links"].append(m.path)
        else:
            out["top_level_files"].append(m.path)
    return out


def _safe_parent(dest: str, rel: str) -> str:
    """Create the parents of ``dest/rel`` as real folders; refuse any that is a symlink."""
    parts = rel.split("/")[:-1]
    current = dest
    for part in parts:
        current = os.path.join(current, part)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current, 0o755)
            continue
        if stat.S_ISLNK(st.st_mode):
            raise CommandExecutionError(f"{current} is a symlink; refusing to extract through it")
        if not stat.S_ISDIR(st.st_mode):
            raise CommandExecutionError(f"{current} exists and is not a directory")
    return os.path.join(dest, rel)


def _clear(target: str, keep_dir: bool) -> None:
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        if not keep_dir:
            shutil.rmtree(target)
    else:
        os.unlink(target)


def _copy(src: IO[bytes], target: str, mode: int) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        shutil.copyfileobj(src, out, _CHUNK)
    os.chmod(target, (mode & 0o755) | 0o600)


def extract(
    name: str,
    dest: str,
    archive_format: str | None = None,
    options: Any = None,
    strip_components: Any = None,
    saltenv: str = "base",
    **kwargs: Any,
) -> list[str]:
    """Extract the archive ``name`` into the folder ``dest``; the member names written."""
    path = _local(name, saltenv)
    fmt = _format(path, archive_format)
    dest = os.path.abspath(str(dest))
    if not os.path.isdir(dest) or os.path.islink(dest):
        raise CommandExecutionError(f"{dest} is not a directory")
    written: list[str] = []
    dir_times: list[tuple[str, float, int]] = []
    with _opened(path, fmt) as handle:
        members = _members(handle, fmt, _strip_option(options, strip_components))
        try:
            for m in members:
                target = _safe_parent(dest, m.path)
                if m.kind == "dir":
                    _clear(target, keep_dir=True)
                    if not os.path.isdir(target):
                        os.mkdir(target, 0o755)
                    dir_times.append((target, m.mtime, m.mode))
                elif m.kind == "link":
                    _clear(target, keep_dir=False)
                    os.symlink(m.target, target)
                elif m.kind == "hardlink":
                    _clear(target, keep_dir=False)
                    os.link(_safe_parent(dest, m.target), target, follow_symlinks=False)
                else:
                    _clear(target, keep_dir=False)
                    src = handle.open(m.info) if fmt == "zip" else handle.extractfile(m.info)
                    if src is None:
                        raise CommandExecutionError(f"Unable to read member {m.raw}")
                    with src:
                        _copy(src, target, m.mode)
                    os.utime(target, (m.mtime, m.mtime), follow_symlinks=False)
                written.append(m.raw)
        except OSError as exc:
            raise CommandExecutionError(f"Extraction of {name} into {dest} failed: {exc}") from None
    for target, mtime, mode in reversed(dir_times):
        try:
            os.chmod(target, (mode & 0o755) | 0o700)
            os.utime(target, (mtime, mtime))
        except OSError as exc:
            log.debug("could not set attributes of %s: %s", target, exc)
    return written


def unzip(
    zip_file: str,
    dest: str,
    excludes: Any = None,
    options: Any = None,
    template: Any = None,
    runas: Any = None,
    trim_output: Any = False,
    password: Any = None,
    extract_perms: bool = True,
    saltenv: str = "base",
    **kwargs: Any,
) -> list[str]:
    """Extract the zip ``zip_file`` into ``dest`` (the same checks as :func:`extract`)."""
    if password:
        raise CommandExecutionError("Password-protected zip files are not supported")
    files = extract(zip_file, dest, archive_format="zip", saltenv=saltenv)
    return files[: int(trim_output)] if trim_output and trim_output is not True else files


def is_encrypted(name: str, clean: bool = False, saltenv: str = "base", **kwargs: Any) -> bool:
    """Is the zip ``name`` password-protected?"""
    path = _local(name, saltenv)
    if guess_format(path) != "zip":
        raise CommandExecutionError(f"{name} is not a ZIP file")
    with _opened(path, "zip") as zf:
        return any(zi.flag_bits & 0x1 for zi in zf.infolist())


def set_owner(path: str, user: Any = None, group: Any = None, test: bool = False, **kwargs: Any) -> bool:
    """Give ``path`` (recursively, links not followed) this owner/group; True when something differed."""
    uid = __salt__["file.user_to_uid"](user) if user else -1
    gid = __salt__["file.group_to_gid"](group) if group else -1
    if uid == "" or gid == "":
        raise CommandExecutionError(f"Unknown user or group: {user} / {group}")
    changed = False

    def fix(p: str) -> None:
        nonlocal changed
        st = os.lstat(p)
        if (uid != -1 and st.st_uid != uid) or (gid != -1 and st.st_gid != gid):
            changed = True
            if not test:
                os.lchown(p, uid, gid)

    if not os.path.lexists(path):
        return False
    fix(path)
    if os.path.isdir(path) and not os.path.islink(path):
        for root, dirs, files in os.walk(path):
            for entry in dirs + files:
                fix(os.path.join(root, entry))
    return changed
