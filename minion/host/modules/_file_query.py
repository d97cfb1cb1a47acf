"""Read-only queries of the ``file`` execution module that templates and formulas call (Salt 3007's).

A private part of ``minion/host/modules/file.py`` (which imports these and so
exposes them as ``file.*``). They read the managed host, so none is pure.
Answers are Salt's: ``check_hash`` compares a file with ``type:hex``,
``type=hex`` or a bare hex digest (its type from its length);
``contains`` / ``contains_regex`` / ``contains_glob`` are False for a
missing or unreadable file; ``readdir`` lists ``.``, ``..`` and the entries
(an absolute directory only); ``access`` tests ``f``/``r``/``w``/``x`` (or
the ``os`` constants); ``get_sum`` is ``"File not found"`` for a missing
file; ``path_exists_glob`` expands ``* ? []``.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.minion.host.fileops import lines
from briny.minion.host.fileops.diff import HASH_LENGTHS

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

__all__ = [
    "read",
    "search",
    "access",
    "check_hash",
    "contains",
    "contains_glob",
    "contains_regex",
    "get_sum",
    "is_blkdev",
    "is_chrdev",
    "is_fifo",
    "lstat",
    "path_exists_glob",
    "readdir",
]

_CHUNK = 32 * 1024  # Salt reads files for contains/contains_glob in chunks of this size


def _digest(path: str, form: str) -> str:
    return str(__salt__["file.get_hash"](path, form))


def check_hash(path: str, file_hash: Any, **kwargs: Any) -> bool:
    """Whether the file at ``path`` has the hash ``file_hash`` (``md5:...``, ``sha256=...`` or bare hex)."""
    path = os.path.expanduser(path)
    if not isinstance(file_hash, str):
        raise SaltInvocationError("hash must be a string")
    for sep in (":", "="):
        if sep in file_hash:
            hash_type, hash_value = file_hash.split(sep, 1)
            break
    else:
        hash_value = file_hash
        by_length = {length: name for name, length in HASH_LENGTHS.items()}
        found = by_length.get(len(file_hash))
        if found is None:
            known = ", ".join(f"{by_length[n]} ({n})" for n in sorted(by_length))
            raise SaltInvocationError(
                f"Hash {file_hash} (length: {len(file_hash)}) could not be matched to a supported hash type. "
                f"The supported hash types and lengths are: {known}"
            )
        hash_type = found
    return _digest(path, hash_type) == hash_value


def _chunks(path: str) -> Any:
    with open(path, encoding="utf-8", errors="replace") as fh:
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                return
            yield chunk


def contains(path: str, text: Any, **kwargs: Any) -> bool:
    """Whether the file contains ``text`` (stripped)."""
    path = os.path.expanduser(path)
    if not os.path.exists(path):
        return False
    wanted = str(text).strip()
    try:
        return any(wanted in chunk for chunk in _chunks(path))
    except OSError:
        return False


def contains_regex(path: str, regex: str, lchar: str = "", **kwargs: Any) -> bool:
    """Whether ``regex`` matches a line of the file (each line stripped of ``lchar`` on the left)."""
    path = os.path.expanduser(path)
    if not os.path.exists(path):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if lchar:
                    line = line.lstrip(lchar)
                if re.search(regex, line):
                    return True
    except OSError:
        return False
    return False


def contains_glob(path: str, glob_expr: str, **kwargs: Any) -> bool:
    """Whether ``glob_expr`` matches a chunk of the file (the whole of a small file)."""
    path = os.path.expanduser(path)
    if not os.path.exists(path):
        return False
    try:
        return any(fnmatch.fnmatch(chunk, glob_expr) for chunk in _chunks(path))
    except OSError:
        return False


def readdir(path: str, **kwargs: Any) -> list[str]:
    """``.``, ``..`` and the entries of the directory ``path`` (absolute)."""
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        raise SaltInvocationError("Dir path must be absolute.")
    if not os.path.isdir(path):
        raise SaltInvocationError(f"A valid directory was not specified: {path}")
    return [".", "..", *os.listdir(path)]


def access(path: str, mode: Any, **kwargs: Any) -> bool:
    """Whether this process may ``f`` (see), ``r``, ``w`` or ``x`` the path (absolute)."""
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        raise SaltInvocationError("Path to link must be absolute.")
    modes = {"f": os.F_OK, "r": os.R_OK, "w": os.W_OK, "x": os.X_OK}
    if mode in modes:
        return os.access(path, modes[mode])
    if mode in modes.values():
        return os.access(path, mode)
    raise SaltInvocationError("Invalid mode specified.")


def path_exists_glob(path: str, **kwargs: Any) -> bool:
    """Whether the glob ``path`` matches a file or directory."""
    return bool(glob.glob(os.path.expanduser(path)))


def get_sum(path: str, form: str = "sha256", **kwargs: Any) -> str:
    """The hex checksum of the file (``form``: md5, sha1, sha224, sha256, sha384, sha512)."""
    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        return "File not found"
    return _digest(path, form)


def lstat(path: str, **kwargs: Any) -> dict[str, Any]:
    """The ``lstat`` fields of ``path`` (absolute): ``st_mode``, ``st_size``, ``st_mtime``, ..."""
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        raise SaltInvocationError("Path to file must be absolute.")
    try:
        st = os.lstat(path)
    except OSError:
        return {}
    keys = ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid")
    return {key: getattr(st, key) for key in keys}


def _is_kind(name: str, test: Any) -> bool:
    name = os.path.expanduser(name)
    try:
        return bool(test(os.stat(name).st_mode))
    except OSError as exc:
        if exc.errno == 2:  # ENOENT
            return False
        raise


def is_blkdev(name: str, **kwargs: Any) -> bool:
    """Whether ``name`` is a block device."""
    return _is_kind(name, stat.S_ISBLK)


def is_chrdev(name: str, **kwargs: Any) -> bool:
    """Whether ``name`` is a character device."""
    return _is_kind(name, stat.S_ISCHR)


def is_fifo(name: str, **kwargs: Any) -> bool:
    """Whether ``name`` is a FIFO (named pipe)."""
    return _is_kind(name, stat.S_ISFIFO)


def read(path: str, binary: bool = False) -> str | bytes:
    """The contents of ``path``, text unless ``binary``."""
    path = os.path.expanduser(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise CommandExecutionError(f"Unable to read {path}: {exc.strerror}") from exc
    return data if binary else data.decode("utf-8", errors="replace")


def search(
    path: str,
    pattern: str,
    flags: int | str | list[str] = 8,
    bufsize: int | str = 1,
    ignore_if_missing: bool = False,
    multiline: bool = False,
) -> bool:
    """True when the regular expression ``pattern`` matches in ``path``."""
    path = os.path.expanduser(path)
    if not os.path.exists(path):
        if ignore_if_missing:
            return False
        raise SaltInvocationError(f"File not found: {path}")
    re_flags = lines.regex_flags(flags)
    if multiline:
        re_flags |= re.MULTILINE
    text = read(path)
    assert isinstance(text, str)
    return re.search(pattern, text, re_flags) is not None
