"""The master's file server: ``file_roots`` (and gitfs trees) served to authenticated minions.

What it serves comes from its backends, in ``fileserver_backend`` order
(:mod:`briny.master.fsbackend`: ``roots``, and ``gitfs`` whose trees are folders in the
master's cache, :mod:`briny.master.gitfs`); below, "roots" are all their folders.

Owns what ``docs/PROTOCOL.md`` (the file server rows) asks of the master:

- ``file_roots`` with several environments (``base``, ``dev``, ...) and
  several roots each; a path resolves in the first root holding it;
- listings per environment (``file_list``), kept in memory and refreshed
  cheaply: at most every ``fileserver_list_cache_time`` seconds (default
  1) the cached listing's directories are stat'ed, and the tree is walked
  again only when one of them changed (a file added, removed or renamed
  changes its folder's mtime) or had changed within 2 s of the last walk
  (file times are coarse); :meth:`FileServer.update` forgets them now;
- sha256 hashes (``file_hash``), cached by (inode, size, mtime, ctime) so
  an unchanged file is hashed once (a file changed in the last 2 s is
  hashed again each time);
- file contents in chunks (``file_chunk``, 1 MiB by default, 8 MiB at most).

Every requested path and saltenv is checked before anything touches the
disk (:func:`check_path`): NUL and control characters, backslashes, absolute
paths, ``..`` components (also percent-encoded), and saltenvs that are not
configured are refused, and logged with the minion's id. Symlinks placed
inside the roots are followed, as Salt does by default
(``fileserver_followsymlinks: True``); with it False a path whose real
location leaves its root is refused (and left out of listings).

Where it runs: in the master process. ``file_envs`` is answered on the loop
(no I/O); ``file_list``, ``file_hash`` and ``file_chunk`` are registered as
blocking handlers, so :class:`~briny.master.server.MasterServer` runs them
in its worker threads: walking, hashing and reading never block the loop.
All shared state here is guarded by one lock; hashing itself runs outside it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from briny.common import config
from briny.common.exceptions import FileServerError
from briny.common.fileclient import clean_path
from briny.common.numbers import whole
from briny.master import fsbackend

log = logging.getLogger(__name__)

HASH_TYPE = "sha256"
CHUNK_SIZE = 1024 * 1024  # what a chunk request gets when it names no size
CHUNK_MAX = 8 * 1024 * 1024  # the largest chunk served
MAX_PATH = 4096
MAX_SALTENV = 255
HASH_CACHE_MAX = 100_000
RACY_NS = 2_000_000_000  # a stamp this close to "now" may hide a change made in the same tick


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_path(path: Any) -> str:
    """The relative, normalised form of a requested path, or FileServerError saying why not.

    Stricter than :func:`briny.common.fileclient.clean_path` (which it also
    applies): no control characters, no backslash, no empty path, and the
    percent-decoded form is held to the same rules.
    """
    if not isinstance(path, str):
        raise FileServerError("the path must be a string")
    if not path or len(path) > MAX_PATH:
        raise FileServerError(f"the path must be 1 to {MAX_PATH} characters long")
    decoded = urllib.parse.unquote(path)
    for candidate in (path, decoded):
        if "\x00" in candidate:
            raise FileServerError(f"path {_short(path)} contains a NUL byte")
        if any(ord(c) < 32 or ord(c) == 127 for c in candidate):
            raise FileServerError(f"path {_short(path)} contains a control character")
        if "\\" in candidate:
            raise FileServerError(f"path {_short(path)} contains a backslash")
    rel = clean_path(path)  # absolute paths, drive letters, '..' (raw and decoded)
    if not rel:
        raise FileServerError(f"path {_short(path)} names no file")
    return rel


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


@dataclass
class _Listing:
    """One environment's listing and the folder stamps it was made from."""

    files: list[str]
    dirs: list[str]
    stamps: dict[str, tuple[int, int]]  # folder (as walked) -> (inode, mtime_ns); roots too
    roots: list[str]  # the folders walked: a backend's new fetch changes them
    checked: float  # monotonic time of the last walk or stamp check
    racy: bool = False  # a folder changed just before the walk: walk again next time
    walks: int = 1


@dataclass
class _Hashed:
    key: tuple[int, int, int, int]  # (inode, size, mtime_ns, ctime_ns)
    hsum: str


class FileServer:
    """Serves ``opts["file_roots"]``; thread-safe. See the module docstring."""

    def __init__(self, opts: dict[str, Any]) -> None:
        self.opts = opts
        self.backends = fsbackend.load(opts)  # fileserver_backend order: the first holding a path wins
        self.followsymlinks = bool(config.setting(self.opts, "fileserver_followsymlinks"))
        # seconds a listing is trusted before its folders are stat'ed again
        self.ttl = config.number(self.opts, "fileserver_list_cache_time", zero=True)
        self._lock = threading.Lock()
        self._listings: dict[str, _Listing] = {}
        self._hashes: dict[str, _Hashed] = {}

    @property
    def roots(self) -> dict[str, list[str]]:
        """``{saltenv: [folder, ...]}`` of every backend, in ``fileserver_backend`` order (gitfs:
        its last good fetches, so this may change from one call to the next)."""
        if len(self.backends) == 1:
            return self.backends[0].roots()
        merged: dict[str, list[str]] = {}
        for backend in self.backends:
            for env, dirs in backend.roots().items():
                merged.setdefault(env, []).extend(dirs)
        return merged

    def _strict(self, root: str) -> bool:
        """Whether symlinks under ``root`` must stay inside it whatever fileserver_followsymlinks
        says (a gitfs tree: a repository's symlink never reaches the master's own files)."""
        return any(b.strict(root) for b in self.backends)

    def update_backends(self) -> dict[str, Any]:
        """Update every backend that fetches (gitfs) and forget the cached listings (worker):
        ``{backend: its report}``."""
        report: dict[str, Any] = {"roots": "nothing to fetch"} if "roots" in [b.name for b in self.backends] else {}
        git = fsbackend.gitfs_of(self.backends)
        if git is not None:
            report["gitfs"] = git.update()
        self.update()
        return report

    # -- checks -------------------------------------------------------------------------------
    def envs(self) -> list[str]:
        return sorted(self.roots)

    def check_saltenv(self, saltenv: Any) -> str:
        if saltenv is None or saltenv == "":
            saltenv = "base"
        if not isinstance(saltenv, str) or len(saltenv) > MAX_SALTENV:
            raise FileServerError("the saltenv must be a string")
        if saltenv not in self.roots:
            raise FileServerError(f"saltenv {_short(saltenv)} is not served by {'/'.join(self._names())}")
        return saltenv

    def _names(self) -> list[str]:
        names = [b.name for b in self.backends]
        return ["file_roots" if n == "roots" else n for n in names] or ["any backend"]

    def resolve(self, path: Any, saltenv: Any) -> tuple[str, str, os.stat_result] | None:
        """(relative path, full path, stat) of the first root holding ``path``; None when no root
        does; FileServerError for a refused path or saltenv (worker: stats the disk)."""
        env = self.check_saltenv(saltenv)
        rel = check_path(path)
        for root in self.roots.get(env, []):
            full = os.path.join(root, rel)
            try:
                st = os.stat(full)
            except OSError:
                continue
            if not self.followsymlinks or self._strict(root):
                real_root = os.path.realpath(root)
                if not _inside(os.path.realpath(full), real_root):
                    raise FileServerError(
                        f"path {_short(path)} leaves its file root through a symlink "
                        "(fileserver_followsymlinks is False)"
                    )
            return rel, full, st
        return None

    # -- listings -----------------------------------------------------------------------------
    def update(self, saltenv: str | None = None) -> None:
        """Forget cached listings (one environment, or all): the next request walks again."""
        with self._lock:
            if saltenv is None:
                self._listings.clear()
            else:
                self._listings.pop(saltenv, None)

    def _walk(self, env: str) -> _Listing:
        """Walk every root of ``env`` (worker)."""
        files: set[str] = set()
        dirs: set[str] = set()
        stamps: dict[str, tuple[int, int]] = {}
        started = time.time_ns()
        roots = list(self.roots.get(env, []))
        for root in roots:
            real_root = os.path.realpath(root)
            strict = self._strict(root)
            try:
                st = os.stat(root)
            except OSError:
                stamps[root] = (-1, -1)  # a root that appears later changes the stamp
                continue
            if not stat.S_ISDIR(st.st_mode):
                continue
            seen_dirs: set[str] = set()
            for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
                real_dir = os.path.realpath(dirpath)
                if real_dir in seen_dirs:  # a symlink loop: walk each real folder once
                    dirnames[:] = []
                    continue
                seen_dirs.add(real_dir)
                try:
                    dst = os.stat(dirpath)
                    stamps[dirpath] = (dst.st_ino, dst.st_mtime_ns)
                except OSError:
                    continue
                base = os.path.relpath(dirpath, root)
                base = "" if base == "." else base.replace(os.sep, "/")
                kept = []
                for name in sorted(dirnames):
                    if name.startswith("."):
                        continue
                    full = os.path.join(dirpath, name)
                    if not self._usable(full, real_root, strict):
                        continue
                    kept.append(name)
                    dirs.add(f"{base}/{name}" if base else name)
                dirnames[:] = kept
                for name in filenames:
                    full = os.path.join(dirpath, name)
                    if not self._usable(full, real_root, strict):
                        continue
                    try:
                        if not stat.S_ISREG(os.stat(full).st_mode):
                            continue
                    except OSError:  # a dangling symlink
                        continue
                    files.add(f"{base}/{name}" if base else name)
        # file times come from a coarse clock: a folder changed in the tick of the walk may change
        # again without a new mtime, so such a listing is only trusted until the next check
        racy = any(mtime >= started - RACY_NS for _ino, mtime in stamps.values())
        return _Listing(sorted(files), sorted(dirs), stamps, roots, time.monotonic(), racy)

    def _usable(self, full: str, real_root: str, strict: bool = False) -> bool:
        """Whether a walked entry may be listed: always, unless it is a symlink leaving the root
        while ``fileserver_followsymlinks`` is False (or the root is ``strict``)."""
        if (self.followsymlinks and not strict) or not os.path.islink(full):
            return True
        return _inside(os.path.realpath(full), real_root)

    @staticmethod
    def _fresh(listing: _Listing) -> bool:
        """Whether no folder of the listing changed since it was made (worker: one stat each)."""
        for folder, stamp in listing.stamps.items():
            try:
                st = os.stat(folder)
            except OSError:
                if stamp != (-1, -1):
                    return False
                continue
            if (st.st_ino, st.st_mtime_ns) != stamp:
                return False
        return True

    def listing(self, saltenv: Any) -> _Listing:
        """The listing of ``saltenv``, walked only when its folders changed (worker)."""
        env = self.check_saltenv(saltenv)
        with self._lock:
            cached = self._listings.get(env)
        now = time.monotonic()
        roots = self.roots.get(env, [])
        if cached is not None and cached.roots != roots:
            cached = None  # a backend serves other folders now (a new fetch)
        if cached is not None and now - cached.checked < self.ttl:
            return cached
        if cached is not None and not cached.racy and self._fresh(cached):
            cached.checked = time.monotonic()
            return cached
        fresh = self._walk(env)
        if cached is not None:
            fresh.walks = cached.walks + 1
        with self._lock:
            self._listings[env] = fresh
        log.debug("walked saltenv %s: %d files, %d folders", env, len(fresh.files), len(fresh.dirs))
        return fresh

    def file_list(self, saltenv: Any, prefix: Any = "") -> dict[str, Any]:
        """``{"files": [...], "dirs": [...]}`` of ``saltenv`` under ``prefix`` (worker)."""
        if prefix is None:
            prefix = ""
        if not isinstance(prefix, str) or len(prefix) > MAX_PATH:
            raise FileServerError("the prefix must be a string")
        if prefix:
            check_path(prefix)
        listing = self.listing(saltenv)
        if not prefix:
            return {"files": list(listing.files), "dirs": list(listing.dirs)}
        return {
            "files": [f for f in listing.files if f.startswith(prefix)],
            "dirs": [d for d in listing.dirs if d.startswith(prefix)],
        }

    # -- hashes and contents ------------------------------------------------------------------
    def _regular_file(self, path: Any, saltenv: Any) -> tuple[str, os.stat_result]:
        """(full path, stat) of the regular file ``salt://path`` in ``saltenv``;
        FileServerError when refused, FileNotFoundError when not there or not a file."""
        found = self.resolve(path, saltenv)
        if found is None:
            raise FileNotFoundError(f"salt://{path} is not in saltenv {saltenv or 'base'}")
        _rel, full, st = found
        if not stat.S_ISREG(st.st_mode):
            raise FileNotFoundError(f"salt://{path} is not a file")
        return full, st

    def file_hash(self, path: Any, saltenv: Any) -> dict[str, Any]:
        """``{"hash_type", "hsum", "size", "mode"}`` of a file (``mode``: its permission bits, for
        ``mode: keep``); FileServerError when refused, not there or not a regular file (worker:
        may read the whole file)."""
        full, st = self._regular_file(path, saltenv)
        key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        mode = stat.S_IMODE(st.st_mode)
        with self._lock:
            hit = self._hashes.get(full)
        if hit is not None and hit.key == key:
            return {"hash_type": HASH_TYPE, "hsum": hit.hsum, "size": st.st_size, "mode": mode}
        digest = hashlib.sha256()
        with open(full, "rb") as fh:
            fst = os.fstat(fh.fileno())
            for block in iter(lambda: fh.read(CHUNK_SIZE), b""):
                digest.update(block)
        key = (fst.st_ino, fst.st_size, fst.st_mtime_ns, fst.st_ctime_ns)
        hsum = digest.hexdigest()
        mode = stat.S_IMODE(fst.st_mode)
        if fst.st_mtime_ns >= time.time_ns() - RACY_NS:
            return {"hash_type": HASH_TYPE, "hsum": hsum, "size": fst.st_size, "mode": mode}  # too fresh to keep
        with self._lock:
            if len(self._hashes) >= HASH_CACHE_MAX:
                self._hashes.clear()
            self._hashes[full] = _Hashed(key, hsum)
        return {"hash_type": HASH_TYPE, "hsum": hsum, "size": fst.st_size, "mode": mode}

    def read_chunk(self, path: Any, saltenv: Any, offset: Any, size: Any = None) -> dict[str, Any]:
        """``{"data", "eof", "size"}``: up to ``size`` bytes of a file from ``offset`` (worker)."""
        if whole(offset, None) is None:
            raise FileServerError("'offset' must be an integer >= 0")
        if size is None:
            size = CHUNK_SIZE
        if whole(size, None, 1, CHUNK_MAX) is None:
            raise FileServerError(f"'size' must be an integer from 1 to {CHUNK_MAX}")
        full, st = self._regular_file(path, saltenv)
        with open(full, "rb") as fh:
            total = os.fstat(fh.fileno()).st_size
            fh.seek(offset)
            data = fh.read(size)
        return {"data": data, "eof": offset + len(data) >= total, "size": total}

    # -- request handlers (MasterServer) ------------------------------------------------------
    def register(self, server: Any) -> None:
        """Serve ``file_envs`` (loop) and ``file_list``/``file_hash``/``file_chunk`` (workers)."""
        server.register_handler("file_envs", self.handle_envs, blocking=False)
        server.register_handler("file_list", self.handle_list, blocking=True)
        server.register_handler("file_hash", self.handle_hash, blocking=True)
        server.register_handler("file_chunk", self.handle_chunk, blocking=True)

    def _refuse(self, sess: Any, cmd: str, payload: dict[str, Any], exc: Exception) -> dict[str, Any]:
        log.warning(
            "refused %s from minion %s (path %s, saltenv %s): %s",
            cmd,
            getattr(sess, "id", "?"),
            _short(payload.get("path", payload.get("prefix", ""))),
            _short(payload.get("saltenv")),
            exc,
        )
        return {"error": str(exc)}

    def handle_envs(self, sess: Any, payload: dict[str, Any]) -> dict[str, Any]:
        return {"envs": self.envs()}

    def handle_list(self, sess: Any, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.file_list(payload.get("saltenv"), payload.get("prefix", ""))
        except FileServerError as exc:
            return self._refuse(sess, "file_list", payload, exc)

    def handle_hash(self, sess: Any, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.file_hash(payload.get("path"), payload.get("saltenv"))
        except FileServerError as exc:
            return self._refuse(sess, "file_hash", payload, exc)
        except OSError as exc:  # not there (or unreadable): an answer, not an attack
            log.debug("file_hash from %s: %s", getattr(sess, "id", "?"), exc)
            return _missing(exc)

    def handle_chunk(self, sess: Any, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return self.read_chunk(
                payload.get("path"), payload.get("saltenv"), payload.get("offset", 0), payload.get("size")
            )
        except FileServerError as exc:
            return self._refuse(sess, "file_chunk", payload, exc)
        except OSError as exc:
            log.debug("file_chunk from %s: %s", getattr(sess, "id", "?"), exc)
            return _missing(exc)


def _missing(exc: OSError) -> dict[str, Any]:
    """The reply for a file that is not there (``missing``) or cannot be read."""
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return {"error": str(exc) if exc.filename is None else "no such file", "missing": True}
    return {"error": f"the master cannot read the file: {exc.strerror or exc}"}


def attach(server: Any, opts: dict[str, Any]) -> FileServer:
    """Make the file server of ``opts`` and register its handlers on ``server``."""
    fs = FileServer(opts)
    fs.register(server)
    log.info("file server: saltenvs %s", ", ".join(fs.envs()) or "(none)")
    return fs


def symlinks(fs: FileServer, saltenv: Any, prefix: Any = "") -> dict[str, str]:
    """``{path: link target}`` of the symlinks ``saltenv`` serves under ``prefix`` (worker; Salt's
    ``fileserver.symlink_list``): the first folder holding a path wins, as for files."""
    env = fs.check_saltenv(saltenv)
    prefix = check_path(prefix) if prefix else ""
    found: dict[str, str] = {}
    for root in fs.roots.get(env, []):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for name in [*filenames, *dirnames]:
                full = os.path.join(dirpath, name)
                if not os.path.islink(full):
                    continue
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                if rel.startswith(prefix) and rel not in found:
                    found[rel] = os.readlink(full)
    return dict(sorted(found.items()))
