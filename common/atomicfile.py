"""Atomic writes of a daemon's own files (keys, pidfiles, caches, proc records).

Runs wherever a daemon persists its own state. :func:`write_atomic` writes the
whole content to a new temp file in the target's folder (created with
``O_EXCL``, named ``TMP_PREFIX`` + random hex so folder scans can skip it),
sets the final mode on it, optionally fsyncs it, then renames it over the
target: a reader sees the old file or the new one, never a torn one, and the
file never exists with a looser mode than asked. On any failure the temp file
is removed and the error propagates (OSError for the disk's refusals).

Not for files a state manages on a user's behalf (``minion/host/fileops/`` keeps
their owners, modes and attributes); the folder must exist.
"""

from __future__ import annotations

import contextlib
import os
import secrets

TMP_PREFIX = ".tmp-"  # a file being written, then renamed: scans of a daemon's folders skip it
_TRIES = 5


def _create(folder: str) -> tuple[int, str]:
    for _ in range(_TRIES):
        tmp = os.path.join(folder, f"{TMP_PREFIX}{secrets.token_hex(8)}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temp file in {folder}: {_TRIES} names taken")


def write_atomic(path: str | os.PathLike[str], data: bytes | str, mode: int = 0o600, fsync: bool = False) -> None:
    """Replace ``path`` with ``data`` (text as UTF-8) atomically, the file's mode ``mode``
    (whatever the umask); ``fsync`` flushes the content to disk before the rename."""
    path = os.fspath(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd, tmp = _create(os.path.dirname(path) or ".")
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
