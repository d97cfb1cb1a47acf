"""The ``file`` execution module: paths, contents, owners and modes on this host.

Runs on the managed host (``briny-call``, the minion's job workers), and is
what the ``file`` state module reaches through ``__salt__``. Functions keep
Salt's names, signatures and return values; where Salt lets a raw Python
exception escape (``file.read`` of a missing file, ...) these raise
:class:`CommandExecutionError` with a message instead.

Writes go through :func:`atomic_write` (a briny addition): a temporary file in
the destination's own folder, then ``os.replace``, so a reader never sees a
half-written file and a symlink planted at the temporary name is never
followed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import (
    CommandExecutionError,
    SaltInvocationError,
)
from briny.minion.host.fileops import diff, managed, perms, tree

from ._file_edit import line as line
from ._file_edit import replace as replace
from ._file_edit import blockreplace as blockreplace
from ._file_edit import comment_line as comment_line
from ._file_edit import comment_state as comment_state
from ._file_edit import keyvalue_edit as keyvalue_edit
from ._file_managed import apply_template_on_contents as apply_template_on_contents
from ._file_managed import source_list as source_list
from ._file_managed import get_source_sum as get_source_sum
from ._file_managed import managed_data as managed_data
from ._file_managed import check_managed_data as check_managed_data
from ._file_managed import manage_data as manage_data
from ._file_managed import check_cmd_data as check_cmd_data
from ._file_query import read as read
from ._file_query import search as search
from ._file_query import access as access
from ._file_query import check_hash as check_hash
from ._file_query import contains as contains
from ._file_query import contains_glob as contains_glob
from ._file_query import contains_regex as contains_regex
from ._file_query import get_sum as get_sum
from ._file_query import is_blkdev as is_blkdev
from ._file_query import is_chrdev as is_chrdev
from ._file_query import is_fifo as is_fifo
from ._file_query import lstat as lstat
from ._file_query import path_exists_glob as path_exists_glob
from ._file_query import readdir as readdir

if TYPE_CHECKING:
    pass


log = logging.getLogger(__name__)


# -- names and ids -----------------------------------------------------------
def user_to_uid(user: Any) -> int | str:
    """The uid of ``user`` (a name or a number), or ``""`` when there is none."""
    return perms.user_to_uid(user)


def group_to_gid(group: Any) -> int | str:
    """The gid of ``group`` (a name or a number), or ``""`` when there is none."""
    return perms.group_to_gid(group)


def uid_to_user(uid: Any) -> str | int:
    """The user name of ``uid``, or the uid itself when no user has it."""
    return perms.uid_to_user(uid)


def gid_to_group(gid: Any) -> str | int:
    """The group name of ``gid``, or the gid itself when no group has it."""
    return perms.gid_to_group(gid)


def normalize_mode(mode: Any) -> str | None:
    """``644``, ``"644"``, ``"0644"`` → ``"0644"``; None stays None (SaltInvocationError if bad)."""
    return perms.normalize_mode(mode)


# -- queries -----------------------------------------------------------------
def file_exists(path: str) -> bool:
    """True when ``path`` is a regular file (after following symlinks)."""
    return os.path.isfile(os.path.expanduser(path))


def directory_exists(path: str) -> bool:
    """True when ``path`` is a directory (after following symlinks)."""
    return os.path.isdir(os.path.expanduser(path))


def dirname(path: str) -> str:
    return os.path.dirname(os.path.expanduser(path))


def basename(path: str) -> str:
    return os.path.basename(os.path.expanduser(path))


def join(*args: str) -> str:
    return os.path.join(*args)


def get_hash(path: str, form: str = "sha256", chunk_size: int = 65536) -> str:
    """The hex digest of the file at ``path`` (``form`` any hashlib name)."""
    path = os.path.expanduser(path)
    try:
        digest = hashlib.new(form)
    except ValueError as exc:
        raise SaltInvocationError(f"Invalid hash type: {form}") from exc
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(chunk_size), b""):
                digest.update(chunk)
    except OSError as exc:
        raise CommandExecutionError(f"Unable to hash {path}: {exc.strerror}") from exc
    return digest.hexdigest()


def _stat(path: str, follow_symlinks: bool = True) -> os.stat_result:
    path = os.path.expanduser(path)
    try:
        return os.stat(path) if follow_symlinks else os.lstat(path)
    except FileNotFoundError as exc:
        raise CommandExecutionError(f"Path not found: {path}") from exc
    except OSError as exc:
        raise CommandExecutionError(f"Unable to stat {path}: {exc.strerror}") from exc


def get_mode(path: str, follow_symlinks: bool = True) -> str:
    """The permission bits of ``path`` as four octal digits, e.g. ``"0644"``."""
    return f"{stat.S_IMODE(_stat(path, follow_symlinks).st_mode):04o}"


def get_user(path: str, follow_symlinks: bool = True) -> str | int:
    return uid_to_user(_stat(path, follow_symlinks).st_uid)


def get_group(path: str, follow_symlinks: bool = True) -> str | int:
    return gid_to_group(_stat(path, follow_symlinks).st_gid)


def stats(path: str, hash_type: str | None = None, follow_symlinks: bool = True) -> dict[str, Any]:
    """Salt's ``file.stats`` dict: inode, uid, gid, user, group, times, size, mode, type, target."""
    path = os.path.expanduser(path)
    st = _stat(path, follow_symlinks)
    kinds = [
        (stat.S_ISDIR, "dir"),
        (stat.S_ISCHR, "char"),
        (stat.S_ISBLK, "block"),
        (stat.S_ISREG, "file"),
        (stat.S_ISFIFO, "pipe"),
        (stat.S_ISLNK, "link"),
        (stat.S_ISSOCK, "socket"),
    ]
    kind = next((name for test, name in kinds if test(st.st_mode)), "")
    ret: dict[str, Any] = {
        "inode": st.st_ino,
        "uid": st.st_uid,
        "gid": st.st_gid,
        "group": gid_to_group(st.st_gid),
        "user": uid_to_user(st.st_uid),
        "atime": st.st_atime,
        "mtime": st.st_mtime,
        "ctime": st.st_ctime,
        "size": st.st_size,
        "mode": f"{stat.S_IMODE(st.st_mode):04o}",
        "type": kind,
        "target": os.path.realpath(path),
    }
    if hash_type and kind == "file":
        ret["sum"] = get_hash(path, hash_type)
    return ret


# -- changes -----------------------------------------------------------------
def set_mode(path: str, mode: Any) -> str:
    """Set the permission bits; returns the new mode, or ``"Invalid Mode X"``."""
    path = os.path.expanduser(path)
    try:
        norm = normalize_mode(mode)
    except SaltInvocationError:
        return f"Invalid Mode {mode}"
    if norm is None:
        return f"Invalid Mode {mode}"
    if not os.path.exists(path):
        raise CommandExecutionError(f"{path}: File not found")
    try:
        os.chmod(path, int(norm, 8))
    except OSError as exc:
        raise CommandExecutionError(f"Unable to set mode of {path}: {exc.strerror}") from exc
    return get_mode(path)


def chown(path: str, user: Any, group: Any, follow_symlinks: bool = True) -> str | None:
    """Set owner and group; None on success, Salt's error strings otherwise."""
    path = os.path.expanduser(path)
    err = ""
    uid = user_to_uid(user) if user not in (None, "") else -1
    gid = group_to_gid(group) if group not in (None, "") else -1
    if uid == "":
        err += "User does not exist\n"
    if gid == "":
        err += "Group does not exist\n"
    if not os.path.lexists(path):
        err += "File not found"
    if err:
        return err
    try:
        os.chown(path, int(uid), int(gid), follow_symlinks=follow_symlinks)
    except OSError as exc:
        raise CommandExecutionError(f"Unable to chown {path}: {exc.strerror}") from exc
    return None


def touch(name: str, atime: float | None = None, mtime: float | None = None) -> bool:
    """Create ``name`` if missing and set its times (now, unless given)."""
    name = os.path.expanduser(name)
    if atime is not None and mtime is None:
        mtime = atime
    if mtime is not None and atime is None:
        atime = mtime
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOCTTY, 0o666)
        os.close(fd)
        os.utime(name, None if atime is None or mtime is None else (float(atime), float(mtime)))
    except FileNotFoundError as exc:
        raise CommandExecutionError("No such file or directory") from exc
    except (OSError, TypeError, ValueError) as exc:
        raise CommandExecutionError(f"Unable to touch {name}: {exc}") from exc
    return True


def remove(path: str, **kwargs: Any) -> bool:
    """Remove a file, link or whole directory tree; False when nothing was there."""
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        raise SaltInvocationError(f"File path must be absolute: {path}")
    try:
        if os.path.islink(path) or os.path.isfile(path) or (os.path.lexists(path) and not os.path.isdir(path)):
            os.remove(path)
            return True
        if os.path.isdir(path):
            _rmtree(path)
            return True
    except OSError as exc:
        raise CommandExecutionError(f"Could not remove '{path}': {exc.strerror}") from exc
    return False


def _rmtree(path: str) -> None:
    # symlinks inside the tree are removed, never followed
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            _rmtree(entry.path)
        else:
            os.remove(entry.path)
    os.rmdir(path)


def write(path: str, *args: Any, **kwargs: Any) -> str:
    """Write each argument as a line; ``Wrote N lines to "path"``."""
    path = os.path.expanduser(path)
    lines = [str(a) for a in args] + [str(v) for k, v in kwargs.items() if not k.startswith("__")]
    atomic_write(path, "".join(f"{line}\n" for line in lines))
    return f'Wrote {len(lines)} lines to "{path}"'


def mkdir(dir_path: str, user: Any = None, group: Any = None, mode: Any = None) -> bool:
    """Create ``dir_path`` and any missing parents, each with these owners and mode."""
    dir_path = os.path.expanduser(dir_path)
    if not os.path.isdir(dir_path):
        makedirs_perms(dir_path, user, group, mode)
    return True


def makedirs(path: str, user: Any = None, group: Any = None, mode: Any = None) -> str | None:
    """Create the missing parents of ``path`` (a trailing ``/`` makes ``path`` itself one)."""
    path = os.path.expanduser(path)
    target = path if path.endswith("/") else os.path.dirname(path)
    if os.path.isdir(target):
        return f"Directory '{target}' already exists"
    if os.path.lexists(target):
        raise CommandExecutionError(f"The path '{target}' already exists and is not a directory")
    makedirs_perms(target, user, group, mode)
    return None


def makedirs_perms(name: str, user: Any = None, group: Any = None, mode: Any = "0755") -> bool:
    """Create ``name`` and its missing parents, applying owner and mode to each one made."""
    tree.makedirs_perms(os.path.expanduser(name.rstrip("/") or "/"), user, group, normalize_mode(mode))
    return True


def atomic_write(
    path: str, data: str | bytes, mode: Any = None, follow_symlinks: bool = True, user: Any = None, group: Any = None
) -> bool:
    """Replace ``path`` with ``data`` atomically (briny addition).

    A temporary file made with ``O_EXCL`` in the destination's folder, then a
    rename. With ``follow_symlinks`` a symlink at ``path`` is resolved and its
    target replaced; otherwise the link itself is replaced. Owner and mode of
    an existing file are kept unless ``mode``/``user``/``group`` are given; a
    new file gets ``mode`` or 0666 minus the umask; both are set before the
    rename, so the final name never shows other permissions.
    """
    path = os.path.expanduser(path)
    if follow_symlinks and os.path.islink(path):
        path = os.path.realpath(path)
    missing = perms.missing_owner(user, group)
    if missing:
        raise CommandExecutionError(missing.strip())
    managed.write(
        path,
        data.encode("utf-8") if isinstance(data, str) else data,
        owner=(user, group),
        exact_mode=normalize_mode(mode),
    )
    return True


# -- directories, links, copies (the work is in fileops.tree) ----------------------------
def directory_plan(
    name: str,
    user: Any = None,
    group: Any = None,
    dir_mode: Any = None,
    file_mode: Any = None,
    recurse: Any = None,
    clean: bool = False,
    exclude_pat: str | list[str] | None = None,
    keep: list[str] | None = None,
) -> dict[str, Any]:
    """What ``file.directory`` would change below ``name`` (briny).

    ``{"items": [[path, perm changes], ...], "removed": [[path, top], ...]}`` in walk order.
    """
    name = os.path.expanduser(name)
    items = (
        tree.recurse_changes(
            name, user, group, perms.normalize_mode(dir_mode), perms.normalize_mode(file_mode), list(recurse or [])
        )
        if recurse
        else []
    )
    removed = tree.clean_list(name, set(keep or []), exclude_pat) if clean else []
    return {"items": [list(i) for i in items], "removed": [list(r) for r in removed]}


def apply_perm_changes(path: str, changes: dict[str, Any], follow_symlinks: bool = True) -> None:
    """Apply ``{"user", "group", "mode"}`` changes to ``path`` (briny)."""
    perms.apply_perms(os.path.expanduser(path), changes, follow_symlinks)


def perm_changes(
    path: str, user: Any = None, group: Any = None, mode: Any = None, follow_symlinks: bool = True
) -> dict[str, Any]:
    """What ``user``/``group``/``mode`` would change on ``path`` (briny)."""
    return perms.perm_changes(os.path.expanduser(path), user, group, perms.normalize_mode(mode), follow_symlinks)


def is_link(path: str) -> bool:
    return os.path.islink(os.path.expanduser(path))


def readlink(path: str, canonicalize: bool = False) -> str:
    path = os.path.expanduser(path)
    if not os.path.islink(path):
        raise SaltInvocationError(f"A valid link was not specified: {path}")
    return os.path.realpath(path) if canonicalize else os.readlink(path)


def symlink(src: str, path: str, force: bool = False, **kwargs: Any) -> bool:
    """Make ``path`` a symlink to ``src``, atomically replacing an old link (or anything, with ``force``)."""
    path = os.path.expanduser(path)
    if os.path.lexists(path) and not os.path.islink(path) and not force:
        raise CommandExecutionError(f"File exists: {path}")
    tmp = f"{path}.briny-link.{os.getpid()}"
    try:
        os.symlink(src, tmp)
        if os.path.isdir(path) and not os.path.islink(path):
            tree.remove(path)
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.islink(tmp):
            os.unlink(tmp)
        raise CommandExecutionError(f"Could not create '{path}': {exc.strerror}") from exc
    return True


def lchown(path: str, user: Any = None, group: Any = None) -> None:
    """Set the owner of ``path`` itself (a link is not followed)."""
    ch = {k: v for k, v in (("user", user), ("group", group)) if v not in (None, "")}
    perms.apply_perms(os.path.expanduser(path), ch, follow_symlinks=False)


def copy(
    src: str, dst: str, recurse: bool = False, remove_existing: bool = False, preserve: bool = False, **kwargs: Any
) -> bool:
    """Copy a file (or a tree with ``recurse``) to ``dst``."""
    src, dst = os.path.expanduser(src), os.path.expanduser(dst)
    if not os.path.lexists(src):
        raise CommandExecutionError(f"No such file or directory '{src}'")
    if os.path.isdir(src) and not recurse:
        raise SaltInvocationError("Cannot copy overwriting a directory without recurse flag set to true!")
    if remove_existing and os.path.lexists(dst):
        tree.remove(dst)
    try:
        tree.copy(src, dst, preserve)
    except OSError as exc:
        raise CommandExecutionError(f"Could not copy '{src}' to '{dst}': {exc.strerror}") from exc
    return True


def rename(src: str, dst: str) -> bool:
    """Move ``src`` to ``dst``."""
    try:
        os.rename(os.path.expanduser(src), os.path.expanduser(dst))
    except OSError as exc:
        raise CommandExecutionError(f"Could not move '{src}' to '{dst}': {exc.strerror}") from exc
    return True


# -- small briny helpers for the state module -------------------------------------------
def perms_missing(user: Any = None, group: Any = None) -> str:
    """Salt's "User X is not available " comment for owners this host lacks ("" if none)."""
    return perms.missing_owner(user, group)


def primary_group(user: Any) -> str | None:
    return perms.primary_group(user)


def dir_mode_for(file_mode: Any) -> str | None:
    """A folder mode for a file mode: execute wherever read is allowed (0640 → 0750)."""
    return perms.dir_mode_for(perms.normalize_mode(file_mode))


def path_included(relname: str, include_pat: Any = None, exclude_pat: Any = None) -> bool:
    """Salt's ``include_pat``/``exclude_pat`` test (each ``E@regex``, a glob or a list of them)
    on a path relative to the tree (briny)."""
    return tree.included(relname, include_pat, exclude_pat)


def get_diff_text(old: str | bytes, new: str | bytes) -> str:
    """Salt's unified diff of two texts."""
    return diff.unified(old, new)


def dict_diff(old: Any, new: Any) -> dict[str, Any]:
    """Per-key ``{"new", "old"}`` of two mappings."""
    return diff.dict_diff(old, new)
