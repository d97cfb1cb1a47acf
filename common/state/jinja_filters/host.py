"""Salt's Jinja filters that read the host: paths and files, users.

Each that reads the host asks the render environment's ``boundary`` first
(:class:`briny.common.state.hostview.HostBoundary`): on the master, which renders for
a minion, it is refused (and recorded, so that minion compiles for itself), so
a template never reads the master's files for a minion. Part of
:mod:`briny.common.state.jinja_filters`.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
from collections.abc import Callable
from typing import Any

from jinja2 import pass_environment

# --- paths and files -----------------------------------------------------


def path_join(*parts: str) -> str:
    first, rest = str(parts[0]), [str(p).lstrip("/") for p in parts[1:]]
    return os.path.join(first, *rest).rstrip("/") if rest else first


def ask_host(environment: Any, name: str) -> None:
    """Raise the boundary's refusal when ``environment`` renders away from the host (the master)."""
    boundary = getattr(environment, "boundary", None)
    if boundary is not None:
        raise boundary.refusal(f"the '{name}' filter")


@pass_environment
def which(environment: Any, exe: str) -> str | None:
    """The path of ``exe`` on this host's ``PATH``; on the master the minion's host is needed."""
    ask_host(environment, "which")
    return shutil.which(exe)


_TEXT_BYTES = bytes(range(32, 127)) + b"\n\r\t\f\b"  # is_text_file's printable bytes
_TEXT_CHARS = frozenset(chr(i) for i in range(32, 127)) | frozenset("\n\r\t\b")  # is_bin_file's


def _looks_binary(block: bytes) -> bool:
    """Salt's heuristic: a NUL, or (not UTF-8) more than 30% of bytes outside printable ASCII."""
    if b"\x00" in block:
        return True
    if not block:
        return False
    try:
        block.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return len(block.translate(None, _TEXT_BYTES)) / len(block) > 0.30


@pass_environment
def is_bin_file(environment: Any, path: str) -> bool:
    """Whether the file ``path`` looks binary (False when it is not a readable file)."""
    ask_host(environment, "is_bin_file")
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            block = fh.read(2048)
    except OSError:
        return False
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        return True
    if "\x00" in text:
        return True
    if not text:
        return False
    return sum(1 for ch in text if ch not in _TEXT_CHARS) / len(text) > 0.30


@pass_environment
def is_text_file(environment: Any, path: str, blocksize: int = 512) -> bool:
    """Whether the file ``path`` looks like text (False when it cannot be read)."""
    ask_host(environment, "is_text_file")
    try:
        with open(path, "rb") as fh:
            block = fh.read(blocksize)
    except OSError:
        return False
    return not _looks_binary(block)


@pass_environment
def is_empty(environment: Any, path: str) -> bool:
    """Whether ``path`` is there and has no bytes."""
    ask_host(environment, "is_empty")
    try:
        return os.stat(path).st_size == 0
    except OSError:
        return False


@pass_environment
def list_files(environment: Any, directory: str) -> list[str]:
    """``directory`` and every file and folder under it (sorted; Salt's order varies from run to
    run); a file is a list of itself."""
    ask_host(environment, "list_files")
    found = {directory}
    for root, dirs, files in os.walk(directory):
        found.update(os.path.join(root, name) for name in files + dirs)
    return sorted(found)


@pass_environment
def file_hashsum(environment: Any, path: str, form: str = "sha256", chunk_size: int = 65536) -> str:
    """The ``form`` hash of the file ``path``; as Salt's, a file that cannot be read fails the render
    (``[Errno 2] No such file or directory: ...``), and so does an unknown ``form``."""
    ask_host(environment, "file_hashsum")
    algorithm = getattr(hashlib, str(form), None)
    if not callable(algorithm) or str(form).startswith("_"):
        raise ValueError(f"Invalid hash type: {form}")
    digest = algorithm()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk_size), b""):
            digest.update(block)
    return str(digest.hexdigest())


@pass_environment
def get_uid(environment: Any, user: str | None = None) -> int | None:
    """The uid of ``user`` (None: this process's effective uid; None when there is no such user)."""
    ask_host(environment, "get_uid")
    if user is None:
        return os.geteuid()
    try:
        return pwd.getpwnam(str(user)).pw_uid
    except KeyError:
        return None


FILTERS: dict[str, Callable[..., Any]] = {
    "path_join": path_join,
    "which": which,
    "is_bin_file": is_bin_file,
    "is_text_file": is_text_file,
    "is_empty": is_empty,
    "list_files": list_files,
    "file_hashsum": file_hashsum,
    "get_uid": get_uid,
}
