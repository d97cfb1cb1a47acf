"""Directory trees: recursive owner/mode checks, ``clean``, backups and copies.

Runs on the managed host, called by the ``file`` execution module. Walks
never follow symlinks: a link inside a managed tree is reported or removed
as a link, its target is never touched.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import shutil
import time
from typing import Any, Iterator

from briny.common.exceptions import CommandExecutionError

from . import perms

log = logging.getLogger(__name__)


def walk(root: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk`` top-down, sorted, never through symlinks."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        filenames.sort()
        yield dirpath, dirnames, filenames


def matches(pattern: str | list[str] | None, relname: str) -> bool:
    """Salt's pattern test: ``E@regex`` (searched) or a glob (matched against the whole path
    relative to the tree, ``*`` crossing ``/``); a list matches when any of its patterns does."""
    if not pattern:
        return False
    if isinstance(pattern, (list, tuple)):
        return any(matches(p, relname) for p in pattern)
    pattern = str(pattern)
    if pattern.startswith("E@"):
        return re.search(pattern[2:], relname) is not None
    return fnmatch.fnmatch(relname, pattern)


def included(
    relname: str, include_pat: str | list[str] | None = None, exclude_pat: str | list[str] | None = None
) -> bool:
    """Salt's ``include_pat``/``exclude_pat`` filter of ``file.recurse`` (each a pattern or a
    list of patterns): kept when it matches ``include_pat`` (if given) and not ``exclude_pat``."""
    if include_pat and not matches(include_pat, relname):
        return False
    return not (exclude_pat and matches(exclude_pat, relname))


def recurse_changes(
    name: str, user: Any, group: Any, dir_mode: str | None, file_mode: str | None, recurse: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    """(path, perm changes) for everything below ``name``, in walk order (files, then dirs)."""
    want_user = user if "user" in recurse else None
    want_group = group if "group" in recurse else None
    want_mode = "mode" in recurse
    out: list[tuple[str, dict[str, Any]]] = []
    for dirpath, dirnames, filenames in walk(name):
        if "ignore_dirs" in recurse and dirpath != name:
            continue
        if "ignore_files" not in recurse:
            for fn in filenames:
                path = os.path.join(dirpath, fn)
                if os.path.islink(path):
                    continue
                ch = perms.perm_changes(path, want_user, want_group, file_mode if want_mode else None)
                if ch:
                    out.append((path, ch))
        if "ignore_dirs" in recurse:
            continue
        for dn in dirnames:
            path = os.path.join(dirpath, dn)
            if os.path.islink(path):
                continue
            ch = perms.perm_changes(path, want_user, want_group, dir_mode if want_mode else None)
            if ch:
                out.append((path, ch))
    return out


def clean_list(name: str, keep: set[str], exclude_pat: str | list[str] | None = None) -> list[tuple[str, bool]]:
    """(path, is the top of a removed subtree) for everything under ``name`` not kept, in the
    directory's own order (``os.walk`` top-down, unsorted; in each folder its files, then its
    folders), the order Salt's ``file.directory`` ``clean`` lists them in.

    A path is kept when it is in ``keep``, is an ancestor of a kept path, or
    matches ``exclude_pat`` (then its ancestors are kept too).
    """
    keep = {os.path.normpath(k) for k in keep}
    for dirpath, dirnames, filenames in walk(name):
        for n in filenames + dirnames:
            path = os.path.join(dirpath, n)
            if matches(exclude_pat, os.path.relpath(path, name)):
                keep.add(path)
    ancestors: set[str] = set()
    for k in keep:
        d = os.path.dirname(k)
        while d.startswith(name) and d != name:
            ancestors.add(d)
            d = os.path.dirname(d)
    out: list[tuple[str, bool]] = []
    gone: list[str] = []
    for dirpath, dirnames, filenames in os.walk(name, followlinks=False):
        inside = any(dirpath == g or dirpath.startswith(g + os.sep) for g in gone)
        for n in filenames + dirnames:
            path = os.path.join(dirpath, n)
            if path in keep or path in ancestors:
                continue
            top = not inside
            out.append((path, top))
            if n in dirnames and top:
                gone.append(path)
    return out


def remove(path: str) -> None:
    """Remove a file, a link or a whole tree (links inside are never followed)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


def backup(path: str, cachedir: str) -> str | None:
    """Copy ``path`` into ``cachedir/file_backup`` as Salt names backups; the copy's path."""
    if not os.path.isfile(path):
        return None
    now = time.time()
    stamp = (
        time.strftime("%a_%b_%d_%H:%M:%S", time.localtime(now))
        + f"_{int((now % 1) * 1_000_000):06d}_"
        + time.strftime("%Y", time.localtime(now))
    )
    rel = os.path.dirname(os.path.abspath(path)).lstrip(os.sep)
    folder = os.path.join(cachedir, "file_backup", rel)
    os.makedirs(folder, exist_ok=True)
    dest = os.path.join(folder, f"{os.path.basename(path)}_{stamp}")
    shutil.copy2(path, dest)
    st = os.stat(path)
    try:
        os.chown(dest, st.st_uid, st.st_gid)
    except OSError:
        pass
    return dest


def copy(src: str, dst: str, preserve: bool = False) -> None:
    """Copy a file or a tree to ``dst`` (links stay links); owners only with ``preserve``."""
    if os.path.isdir(src) and not os.path.islink(src):
        shutil.copytree(src, dst, symlinks=True)
    else:
        tmp = f"{dst}.briny-copy"
        shutil.copy2(src, tmp, follow_symlinks=False)
        os.replace(tmp, dst)
    if preserve:
        st = os.lstat(src)
        os.chown(dst, st.st_uid, st.st_gid, follow_symlinks=False)


def makedirs_perms(path: str, user: Any = None, group: Any = None, mode: str | None = None) -> None:
    """Create ``path`` and its missing parents, giving each one made these owners and mode."""
    missing: list[str] = []
    cur = path
    while not os.path.isdir(cur):
        if os.path.lexists(cur):
            raise CommandExecutionError(f"The path '{cur}' exists and is not a directory")
        missing.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            if not os.path.isdir(d):
                raise CommandExecutionError(f"The path '{d}' exists and is not a directory") from None
            continue
        except OSError as exc:
            raise CommandExecutionError(f"Unable to create directory {d}: {exc.strerror}") from exc
        perms.apply_perms(d, perms.perm_changes(d, user, group, mode))
