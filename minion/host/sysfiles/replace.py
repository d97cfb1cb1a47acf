"""Writing a system file back: atomically, keeping its owner and mode.

Every format in this package is rewritten the same way: the new text goes to
a temporary file in the same folder, is flushed to disk and renamed over the
old one (``fileops.managed.write``), so a reader (``mount -a``, the
resolver, ``sshd``) sees the old file or the new one, never a half, and a
failed write leaves the old file whole.

One exception, logged: a file that is itself a mount point (Docker and
Podman bind-mount ``/etc/hosts``, ``/etc/hostname`` and ``/etc/resolv.conf``
into containers) cannot be renamed over (``EBUSY``); it is then rewritten in
place (written, truncated to the new length, flushed), as Salt always does.
"""

from __future__ import annotations

import errno
import logging
import os

from briny.minion.host.fileops import managed

log = logging.getLogger(__name__)


def replace_text(path: str, text: str, encoding: str = "utf-8", errors: str = "strict") -> None:
    """Replace ``path`` with ``text`` (raises OSError)."""
    data = text.encode(encoding, errors)
    try:
        managed.write(path, data)
    except OSError as exc:
        if exc.errno != errno.EBUSY or not os.path.isfile(path):
            raise
        log.warning("%s is a mount point (bind-mounted?): rewriting it in place", path)
        with open(path, "r+b") as fh:
            fh.write(data)
            fh.truncate(len(data))
            fh.flush()
            os.fsync(fh.fileno())


def read_text(path: str, encoding: str = "utf-8", errors: str = "strict") -> str | None:
    """The text of ``path``, or None when it does not exist (other errors raise OSError).

    ``errors="surrogateescape"`` reads any bytes and writes them back unchanged."""
    try:
        with open(path, encoding=encoding, errors=errors, newline=None) as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def read_error(exc: OSError, path: str) -> str:
    """Salt's words for a file that could not be read (``salt.utils.files.process_read_exception``)."""
    if exc.errno == errno.ENOENT:
        return f"{path} does not exist"
    if exc.errno == errno.EACCES:
        return f"Permission denied reading from {path}"
    return f"Error {exc.errno} encountered reading from {path}: {exc.strerror}"
