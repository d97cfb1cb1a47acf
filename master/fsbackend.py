"""The file server's backends, in ``fileserver_backend`` order: ``roots`` and ``gitfs``.

A backend gives the file server folders to serve per saltenv (:meth:`roots`); the file server
(:mod:`briny.master.fileserver`) puts them one after another in ``fileserver_backend`` order
and serves a path from the first folder holding it, so the first backend holding a file wins,
as Salt's does, and a listing is the union of them all. ``roots`` serves ``file_roots``;
``gitfs`` (:mod:`briny.master.gitfs`) serves the trees of its remotes' last good fetches. A
backend name Salt has that briny does not (``hgfs``, ``svnfs``, ``s3fs``, ``azurefs``,
``minionfs``) is named in a warning and serves nothing.

Where it runs: built once per file server; :meth:`roots` is called from the file server's
workers.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Protocol

from briny.master.gitfs import GitFS

log = logging.getLogger(__name__)

ALIASES = {"roots": "roots", "root": "roots", "gitfs": "gitfs", "git": "gitfs"}
SALT_ONLY = frozenset("hgfs hg svnfs svn s3fs s3 azurefs azure minionfs minion".split())


class Backend(Protocol):
    name: str

    def roots(self) -> dict[str, list[str]]: ...

    def strict(self, root: str) -> bool: ...


class RootsBackend:
    """``file_roots``: each saltenv's folders, as configured."""

    name = "roots"

    def __init__(self, opts: dict[str, Any]) -> None:
        raw = opts.get("file_roots") or {}
        self._roots: dict[str, list[str]] = {
            str(env): [os.path.abspath(str(d)) for d in dirs] for env, dirs in raw.items() if isinstance(dirs, list)
        }

    def roots(self) -> dict[str, list[str]]:
        return self._roots

    def strict(self, root: str) -> bool:
        return False


def names(opts: dict[str, Any]) -> list[str]:
    """The backends ``fileserver_backend`` asks for, in order (briny's names)."""
    raw = opts.get("fileserver_backend")
    if raw is None or raw == "":
        raw = ["roots"]
    if isinstance(raw, str):
        raw = [part.strip() for part in raw.split(",")]
    if not isinstance(raw, list):
        log.warning("fileserver_backend must be a list of backends, not %r; serving roots", raw)
        return ["roots"]
    found: list[str] = []
    for item in raw:
        name = ALIASES.get(str(item).strip().lower())
        if name is None:
            known = "a Salt backend briny does not have" if str(item).lower() in SALT_ONLY else "not a backend"
            log.warning("fileserver_backend: %s is %s; it serves nothing", item, known)
            continue
        if name not in found:
            found.append(name)
    return found


def load(opts: dict[str, Any]) -> list[Backend]:
    """The backends of ``opts``, in ``fileserver_backend`` order."""
    backends: list[Backend] = []
    for name in names(opts):
        backends.append(RootsBackend(opts) if name == "roots" else GitFS(opts))
    if opts.get("gitfs_remotes") and "gitfs" not in [b.name for b in backends]:
        log.warning("gitfs_remotes is set but fileserver_backend does not list gitfs: the remotes serve nothing")
    return backends


def gitfs_of(backends: list[Backend]) -> GitFS | None:
    """The gitfs backend among ``backends``, if any."""
    return next((b for b in backends if isinstance(b, GitFS)), None)
