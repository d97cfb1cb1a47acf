"""The ``cp`` execution module: reaching the ``salt://`` file tree from a host.

Runs on the managed host. Everything goes through the file client of these
opts (:func:`briny.common.fileclient.get_client`): in masterless mode
``salt://x`` resolves through ``file_roots`` on disk, under a minion the
daemon's remote client fetches from the master. Local paths are passed
through, as Salt does. Return values are Salt's: a path or ``False``, a
string or ``False``, lists of relative names.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from briny.common import fileclient
from briny.common.exceptions import FileServerError

log = logging.getLogger(__name__)


def _saltenv(saltenv: str | None) -> str:
    if saltenv:
        return str(saltenv)
    return str(__opts__.get("saltenv") or "base")  # type: ignore[name-defined]  # noqa: F821


def _client() -> Any:
    return fileclient.get_client(__opts__)  # type: ignore[name-defined]  # noqa: F821


def cache_file(path: str, saltenv: str | None = None, source_hash: str | None = None,
               verify_ssl: bool = True, use_etag: bool = False, **kwargs: Any) -> str | bool:
    """A local path holding ``path`` (``salt://`` or local), or False."""
    env = _saltenv(saltenv)
    if not path:
        return False
    if not str(path).startswith("salt://"):
        local = str(path)
        if local.startswith("file://"):
            local = local[len("file://"):]
        return local if os.path.isfile(local) else False
    try:
        found = _client().cache_file(path, env)
    except FileServerError as exc:
        log.error("Unable to cache file '%s' from saltenv '%s': %s", path, env, exc)
        return False
    if not found:
        log.error("Unable to cache file '%s' from saltenv '%s'.", path, env)
        return False
    return str(found)


def cache_files(paths: list[str] | str, saltenv: str | None = None, **kwargs: Any) -> list[str | bool]:
    if isinstance(paths, str):
        paths = paths.split(",")
    return [cache_file(p, saltenv) for p in paths]


def get_file_str(path: str, saltenv: str | None = None, **kwargs: Any) -> str | bool:
    """The text of ``path``, or False when it cannot be had."""
    local = cache_file(path, saltenv)
    if not local:
        return False
    try:
        with open(str(local), "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
    except OSError as exc:
        log.error("Unable to read %s: %s", local, exc)
        return False


def list_master(saltenv: str | None = None, prefix: str = "", **kwargs: Any) -> list[str]:
    """Every file of the environment, relative to the roots, under ``prefix``."""
    files = _client().list_files(_saltenv(saltenv))
    return sorted(f for f in files if f.startswith(prefix or ""))


def list_master_dirs(saltenv: str | None = None, prefix: str = "", **kwargs: Any) -> list[str]:
    """Every directory holding a file of the environment, under ``prefix``."""
    dirs: set[str] = set()
    for rel in _client().list_files(_saltenv(saltenv)):
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    return sorted(d for d in dirs if d.startswith(prefix or ""))


def list_states(saltenv: str | None = None, **kwargs: Any) -> list[str]:
    """The SLS names of the environment (``a/b.sls`` → ``a.b``)."""
    return sorted(_client().list_states(_saltenv(saltenv)))
