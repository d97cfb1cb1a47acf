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

import grp
import hashlib
import os
import pwd
import re
import stat
import tempfile
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

_MODE_RE = re.compile(r"^[0-7]{1,4}$")


# -- names and ids -----------------------------------------------------------
def user_to_uid(user: Any) -> int | str:
    """The uid of ``user`` (a name or a number), or ``""`` when there is none."""
    if user is None or user == "":
        return ""
    if isinstance(user, int) and not isinstance(user, bool):
        return user
    try:
        return pwd.getpwnam(str(user)).pw_uid
    except KeyError:
        if str(user).isdigit():
            return int(user)
        return ""


def group_to_gid(group: Any) -> int | str:
    """The gid of ``group`` (a name or a number), or ``""`` when there is none."""
    if group is None or group == "":
        return ""
    if isinstance(group, int) and not isinstance(group, bool):
        return group
    try:
        return grp.getgrnam(str(group)).gr_gid
    except KeyError:
        if str(group).isdigit():
            return int(group)
        return ""


def uid_to_user(uid: Any) -> str | int:
    """The user name of ``uid``, or the uid itself when no user has it."""
    try:
        return pwd.getpwuid(int(uid)).pw_name
    except (KeyError, ValueError, TypeError):
        return uid


def gid_to_group(gid: Any) -> str | int:
    """The group name of ``gid``, or the gid itself when no group has it."""
    try:
        return grp.getgrgid(int(gid)).gr_name
    except (KeyError, ValueError, TypeError):
        return gid


def normalize_mode(mode: Any) -> str | None:
    """``644``, ``"644"``, ``"0644"`` → ``"0644"``; None stays None.

    Raises SaltInvocationError for anything that is not an octal mode.
    """
    if mode is None or mode == "":
        return None
    if isinstance(mode, bool):
        raise SaltInvocationError(f"Invalid mode {mode!r}")
    text = str(mode).strip()
    if text.lower().startswith("0o"):
        text = text[2:]
    if not _MODE_RE.match(text.lstrip("0") or "0"):
        raise SaltInvocationError(f"Invalid mode {mode}: a mode is up to four octal digits, like 0644")
    return (text.lstrip("0") or "0").zfill(4)


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


def read(path: str, binary: bool = False) -> str | bytes:
    """The contents of ``path``, text unless ``binary``."""
    path = os.path.expanduser(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise CommandExecutionError(f"Unable to read {path}: {exc.strerror}") from exc
    return data if binary else data.decode("utf-8", errors="replace")


def search(path: str, pattern: str, flags: int | str | list[str] = 8, bufsize: int | str = 1,
           ignore_if_missing: bool = False, multiline: bool = False) -> bool:
    """True when the regular expression ``pattern`` matches in ``path``."""
    path = os.path.expanduser(path)
    if not os.path.exists(path):
        if ignore_if_missing:
            return False
        raise SaltInvocationError(f"File not found: {path}")
    re_flags = _regex_flags(flags)
    if multiline:
        re_flags |= re.MULTILINE
    text = read(path)
    assert isinstance(text, str)
    return re.search(pattern, text, re_flags) is not None


def _regex_flags(flags: int | str | list[str]) -> int:
    if isinstance(flags, int):
        return flags
    names = [flags] if isinstance(flags, str) else list(flags)
    value = 0
    for name in names:
        value |= int(getattr(re, str(name).upper(), 0))
    return value


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
    kinds = [(stat.S_ISDIR, "dir"), (stat.S_ISCHR, "char"), (stat.S_ISBLK, "block"),
             (stat.S_ISREG, "file"), (stat.S_ISFIFO, "pipe"), (stat.S_ISLNK, "link"),
             (stat.S_ISSOCK, "socket")]
    kind = next((name for test, name in kinds if test(st.st_mode)), "")
    ret: dict[str, Any] = {
        "inode": st.st_ino, "uid": st.st_uid, "gid": st.st_gid,
        "group": gid_to_group(st.st_gid), "user": uid_to_user(st.st_uid),
        "atime": st.st_atime, "mtime": st.st_mtime, "ctime": st.st_ctime,
        "size": st.st_size, "mode": f"{stat.S_IMODE(st.st_mode):04o}", "type": kind,
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
        os.utime(name, None if atime is None else (float(atime), float(mtime)))  # type: ignore[arg-type]
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


def _apply_perms(path: str, user: Any = None, group: Any = None, mode: Any = None) -> None:
    norm = normalize_mode(mode)
    if user not in (None, "") or group not in (None, ""):
        err = chown(path, user, group)
        if err:
            raise CommandExecutionError(err.strip())
    if norm is not None:
        os.chmod(path, int(norm, 8))


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
    name = os.path.expanduser(name.rstrip("/") or "/")
    normalize_mode(mode)  # fail before making anything
    missing: list[str] = []
    cur = name
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
        _apply_perms(d, user, group, mode)
    return True


def atomic_write(path: str, data: str | bytes, mode: Any = None, follow_symlinks: bool = True,
                 user: Any = None, group: Any = None) -> bool:
    """Replace ``path`` with ``data`` atomically (briny addition).

    With ``follow_symlinks`` (Salt's default for ``file.managed``) a symlink at
    ``path`` is resolved and its target is replaced; otherwise the link itself
    is replaced by the new file. The temporary file is created with
    ``O_EXCL`` in the destination's folder. Owner and mode of an existing
    file are kept unless ``mode``/``user``/``group`` are given; a new file
    gets ``mode`` or 0666 minus the umask. Owner and mode are set on the
    temporary file, so the final name never shows other permissions.
    """
    path = os.path.expanduser(path)
    if follow_symlinks and os.path.islink(path):
        path = os.path.realpath(path)
    norm = normalize_mode(mode)
    uid = user_to_uid(user) if user not in (None, "") else -1
    gid = group_to_gid(group) if group not in (None, "") else -1
    if uid == "" or gid == "":
        raise CommandExecutionError(f"User {user} or group {group} does not exist")
    folder = os.path.dirname(path) or "."
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        old = os.stat(path) if os.path.lexists(path) and not os.path.islink(path) else None
    except OSError:
        old = None
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".briny", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if norm is not None:
            os.chmod(tmp, int(norm, 8))
        elif old is not None:
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        if old is not None and os.geteuid() == 0:
            os.chown(tmp, old.st_uid, old.st_gid)
        if uid != -1 or gid != -1:
            os.chown(tmp, int(uid), int(gid))
        if norm is not None:
            os.chmod(tmp, int(norm, 8))  # chown may clear set-id bits
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True
