"""Files minions push to the master (``cp.push``; the ``file_recv`` request).

Runs on the master, in a worker thread of the daemon (a blocking request
handler): pure checks on the request, then writes under the master's
cachedir. Thread-safe: one request writes one file and holds no state.

As Salt 3007: off unless the master config sets ``file_recv: True``; a file
lands in ``<cachedir>/minions/<minion id>/files/<path the minion gave>``;
``file_recv_max_size`` (MB, default 100) bounds each file; a file comes in
chunks (``loc`` its offset), the first (``loc`` 0) replacing what was there.

Stricter than Salt, on purpose (a minion is not trusted with the master's
disk):

- the minion id is the session's, never the payload's;
- every path part must be a plain name: no ``..``, ``.``, empty part, ``/``,
  NUL, and at most 64 parts of 255 bytes; absolute paths never reach here
  (the minion strips the leading ``/``, as Salt's does);
- nothing is followed: each folder is opened with ``O_NOFOLLOW`` relative
  to the one before it (``openat``), and the file too, so a symlink placed
  anywhere under the minion's folder (by anyone) cannot lead a write out;
  a part that is not a folder where a folder is needed is refused;
- a chunk must continue the file exactly (``loc`` equal to the bytes
  written so far), so a file is never sparse nor larger than its limit.

A refused request (:class:`FileServerError` inside) gets ``{"error": ...}`` naming why and is logged with the
minion id (Salt answers False and logs only some cases).
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Mapping
from typing import Any

from briny.common import config
from briny.common.exceptions import FileServerError
from briny.common.ids import check_id

log = logging.getLogger(__name__)

MAX_PARTS = 64
MAX_PART_BYTES = 255
MB = 1024 * 1024


def check_parts(path: Any) -> list[str]:
    """The path parts of a push, each a plain name; FileServerError otherwise."""
    if not isinstance(path, list) or not path:
        raise FileServerError("'path' must be a non-empty list of path parts")
    if len(path) > MAX_PARTS:
        raise FileServerError(f"the path has more than {MAX_PARTS} parts")
    for part in path:
        if not isinstance(part, str) or part in ("", ".", ".."):
            raise FileServerError(f"the path part {str(part)[:40]!r} is not a plain name")
        if "/" in part or "\0" in part or "\\" in part:
            raise FileServerError(f"the path part {part[:40]!r} holds a separator or NUL")
        if len(part.encode("utf-8", "surrogateescape")) > MAX_PART_BYTES:
            raise FileServerError("a path part is longer than 255 bytes")
    return list(path)


def minion_folder(opts: Mapping[str, Any], minion_id: str) -> str:
    """``<cachedir>/minions/<id>/files``: where ``minion_id``'s pushed files land."""
    return os.path.join(str(config.setting(opts, "cachedir", "master")), "minions", check_id(minion_id), "files")


def _open_dir(parent: int, name: str) -> int:
    """The folder ``name`` in ``parent`` (made 0700 if missing), never through a symlink."""
    try:
        os.mkdir(name, 0o700, dir_fd=parent)
    except FileExistsError:
        pass
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FileServerError(f"'{name}' is a symlink or not a folder on the master") from None
        raise


def _open_file(dir_fd: int, name: str, flags: int) -> int:
    try:
        return os.open(name, flags, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            raise FileServerError(f"'{name}' is a symlink or not a regular file on the master") from None
        raise


def write_chunk(root: str, parts: list[str], loc: int, data: bytes) -> int:
    """Write ``data`` at ``loc`` of the file ``parts`` under ``root`` (made if missing); the
    file's size after. ``loc`` 0 replaces the file; any other must equal its current size."""
    os.makedirs(root, mode=0o700, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name in parts[:-1]:
            inner = _open_dir(fd, name)
            os.close(fd)
            fd = inner
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_TRUNC if loc == 0 else 0)
        out = _open_file(fd, parts[-1], flags)
        try:
            size = os.fstat(out).st_size
            if loc != size:
                raise FileServerError(f"the chunk at {loc} does not continue the file ({size} bytes so far)")
            os.lseek(out, loc, os.SEEK_SET)
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
            return loc + len(data)
        finally:
            os.close(out)
    finally:
        os.close(fd)


class FileReceiver:
    """The ``file_recv`` request: see the module docstring."""

    def __init__(self, opts: Mapping[str, Any]) -> None:
        self.opts = opts

    def receive(self, minion_id: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Store one chunk from ``minion_id`` (the session's id): ``{"ok": True, "size": N}`` or
        ``{"error": why}``."""
        try:
            if self.opts.get("file_recv") is not True:
                raise FileServerError("this master does not take pushed files (file_recv: False in its config)")
            parts = check_parts(payload.get("path"))
            loc, data = payload.get("loc"), payload.get("data")
            if not isinstance(loc, int) or isinstance(loc, bool) or loc < 0:
                raise FileServerError("'loc' must be an offset of 0 or more")
            if not isinstance(data, bytes):
                raise FileServerError("'data' must be bytes")
            max_mb = config.number(self.opts, "file_recv_max_size")
            if loc + len(data) > int(max_mb * MB):
                raise FileServerError(f"the file is larger than file_recv_max_size ({max_mb:g} MB)")
            size = write_chunk(minion_folder(self.opts, minion_id), parts, loc, data)
        except FileServerError as exc:
            log.warning("refused a file pushed by %s (%s): %s", minion_id, _shown(payload.get("path")), exc)
            return {"error": str(exc)}
        except OSError as exc:
            log.error("cannot store a file pushed by %s (%s): %s", minion_id, _shown(payload.get("path")), exc)
            return {"error": f"the master could not store the file: {exc.strerror}"}
        if loc == 0:
            log.info("%s pushes %s", minion_id, "/".join(parts))
        return {"ok": True, "size": size}

    def handle_request(self, session: Any, payload: dict[str, Any]) -> dict[str, Any]:
        """The request handler (worker thread)."""
        return self.receive(session.id, payload)

    def register(self, server: Any) -> None:
        """Serve ``file_recv`` requests of ``server`` (a MasterServer) in its worker threads."""
        server.register_handler("file_recv", self.handle_request, blocking=True)


def _shown(path: Any) -> str:
    if isinstance(path, list):
        return "/".join(str(p) for p in path)[:200]
    return repr(path)[:200]
