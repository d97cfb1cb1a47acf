"""The minion's ``salt://`` client: the master's file server, through the minion's cache.

:class:`RemoteFileClient` implements :class:`briny.common.fileclient.FileClient`
(``envs``, ``find``, ``get_text``, ``list_files``, ``list_states``,
``cache_file``) by asking the master (``file_envs``, ``file_list``,
``file_hash``, ``file_chunk``; ``docs/PROTOCOL.md``) over the minion's
authenticated request channel, and keeps what it fetched in
``cachedir/files/<saltenv>/<path>``. A file is downloaded only when the
master's sha256 differs from the cached copy's, in chunks of 1 MiB, into a
temporary file that replaces the cached one once its size and hash check out.

Where it runs: in job worker threads (never on the agent's loop): the
``request`` callable it is given blocks until the loop has the master's
answer (:meth:`briny.minion.agent.MinionAgent.request_sync`). The executor
makes one client per job (``__job__.file_client``), so a job sees one
consistent listing per saltenv and asks for each file's hash once; the
cache on disk and the memo of local hashes are shared by every job.

Nothing the master answers is trusted to name a place on disk: saltenvs and
paths (requested or listed) are checked as the master checks them, and the
final cache path must resolve inside ``cachedir/files/<saltenv>``, so a
hostile reply cannot make the minion write outside its cache.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from briny.common.exceptions import FileServerError
from briny.common.fileclient import FileClientBase, clean_path, split_url

log = logging.getLogger(__name__)

Request = Callable[[dict[str, Any], "float | None"], "dict[str, Any] | None"]

CHUNK_SIZE = 1024 * 1024
MAX_PATH = 4096
_SALTENV_RE = re.compile(r"\A[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,254}\Z")

# local hashes of cached files, shared by every job: path -> ((inode, size, mtime_ns), sha256)
_LOCAL_HASHES: dict[str, tuple[tuple[int, int, int], str]] = {}
_LOCAL_LOCK = threading.Lock()


def check_rel(path: Any) -> str:
    """A relative path safe to request and to place under the cache, or FileServerError."""
    if not isinstance(path, str) or not path or len(path) > MAX_PATH:
        raise FileServerError("a salt:// path must be a string of 1 to 4096 characters")
    for candidate in (path, urllib.parse.unquote(path)):
        if any(ord(c) < 32 or ord(c) == 127 for c in candidate):
            raise FileServerError(f"path {path[:80]!r} contains a NUL byte or a control character")
        if "\\" in candidate:
            raise FileServerError(f"path {path[:80]!r} contains a backslash")
    rel = clean_path(path)
    if not rel:
        raise FileServerError(f"path {path[:80]!r} names no file")
    return rel


def check_saltenv(saltenv: Any) -> str:
    if not saltenv:
        return "base"
    if not isinstance(saltenv, str) or not _SALTENV_RE.match(saltenv) or saltenv in (".", ".."):
        raise FileServerError(f"saltenv {str(saltenv)[:80]!r} is not a usable environment name")
    return saltenv


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def local_hash(path: Path) -> str | None:
    """sha256 of a cached file, remembered while its inode, size and mtime stay the same."""
    try:
        st = path.stat()
    except OSError:
        return None
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    name = str(path)
    with _LOCAL_LOCK:
        hit = _LOCAL_HASHES.get(name)
    if hit is not None and hit[0] == key:
        return hit[1]
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(CHUNK_SIZE), b""):
                digest.update(block)
    except OSError:
        return None
    _remember(name, key, digest.hexdigest())
    return digest.hexdigest()


def _remember(name: str, key: tuple[int, int, int], hsum: str) -> None:
    with _LOCAL_LOCK:
        if len(_LOCAL_HASHES) > 100_000:
            _LOCAL_HASHES.clear()
        _LOCAL_HASHES[name] = (key, hsum)


class RemoteFileClient(FileClientBase):
    """``salt://`` from the master, cached under ``cachedir/files``. See the module docstring.

    ``request(payload, timeout)`` sends one request (``payload["cmd"]`` names
    it) and returns the reply map, or None when the master did not answer.
    """

    def __init__(
        self, opts: dict[str, Any], request: Request, *, chunk_size: int = CHUNK_SIZE, timeout: float | None = None
    ) -> None:
        self.opts = opts
        self.request = request
        self.chunk_size = chunk_size
        self.timeout = timeout
        self.cache_root = Path(str(opts.get("cachedir") or ".")) / "files"
        self._envs: list[str] | None = None
        self._listings: dict[str, tuple[frozenset[str], list[str], list[str]]] = {}
        self._known: dict[tuple[str, str], Path] = {}
        self.downloads = 0  # files fetched by this client (tests and logs)

    # -- the channel ----------------------------------------------------------------------------
    def _ask(self, payload: dict[str, Any], what: str) -> dict[str, Any]:
        reply = self.request(payload, self.timeout)
        if reply is None:
            raise FileServerError(f"the master did not answer the {payload['cmd']} request for {what}")
        if not isinstance(reply, dict):
            raise FileServerError(f"the master's answer for {what} is not a map")
        return reply

    # -- listings --------------------------------------------------------------------------------
    def envs(self) -> list[str]:
        if self._envs is None:
            reply = self._ask({"cmd": "file_envs"}, "the saltenvs")
            envs = reply.get("envs")
            if not isinstance(envs, list):
                raise FileServerError(f"the master could not list its saltenvs: {reply.get('error')}")
            self._envs = [e for e in envs if isinstance(e, str) and _SALTENV_RE.match(e)]
        return list(self._envs)

    def _listing(self, saltenv: str) -> tuple[frozenset[str], list[str], list[str]]:
        env = check_saltenv(saltenv)
        if env not in self._listings:
            reply = self._ask({"cmd": "file_list", "saltenv": env}, f"saltenv {env}")
            if reply.get("error"):
                log.warning("the master lists no files for saltenv %s: %s", env, reply["error"])
                self._listings[env] = (frozenset(), [], [])
                return self._listings[env]
            files = self._clean_names(reply.get("files"), env)
            dirs = self._clean_names(reply.get("dirs"), env)
            self._listings[env] = (frozenset(files), files, dirs)
        return self._listings[env]

    @staticmethod
    def _clean_names(names: Any, env: str) -> list[str]:
        if not isinstance(names, list):
            return []
        kept = []
        for name in names:
            try:
                rel = check_rel(name)
            except FileServerError as exc:
                log.warning("ignored a name the master listed in saltenv %s: %s", env, exc)
                continue
            kept.append(rel)
        return sorted(set(kept))

    def list_files(self, saltenv: str) -> list[str]:
        return list(self._listing(saltenv)[1])

    def list_dirs(self, saltenv: str) -> list[str]:
        return list(self._listing(saltenv)[2])

    # -- files -------------------------------------------------------------------------------------
    def local_path(self, rel: str, saltenv: str) -> Path:
        """Where ``rel`` of ``saltenv`` lives in the cache; FileServerError when that would be
        outside ``cachedir/files/<saltenv>`` (a symlink in the cache, a hostile name)."""
        env = check_saltenv(saltenv)
        rel = check_rel(rel)
        env_dir = self.cache_root / env
        target = env_dir / rel
        if not _inside(os.path.realpath(target), os.path.realpath(env_dir)):
            raise FileServerError(f"the cache path of salt://{rel} leaves {env_dir}")
        return target

    def find(self, path: str, saltenv: str) -> Path | None:
        """The cached copy of ``path`` in ``saltenv``, fetched when the master's differs; a cache
        folder for a directory; None when the master has no such path."""
        env = check_saltenv(saltenv)
        rel = check_rel(path)
        known = self._known.get((env, rel))
        if known is not None:
            return known
        names, _files, dirs = self._listing(env)
        if rel not in names:
            if rel in dirs:
                folder = self.local_path(rel, env)
                _makedirs(folder)
                self._known[(env, rel)] = folder
                return folder
            return None
        local = self._sync(rel, env)
        if local is not None:
            self._known[(env, rel)] = local
        return local

    def _sync(self, rel: str, env: str, attempts: int = 2) -> Path | None:
        target = self.local_path(rel, env)
        for attempt in range(attempts):
            info = self._ask({"cmd": "file_hash", "path": rel, "saltenv": env}, f"salt://{rel}")
            if info.get("missing"):
                return None
            if info.get("error"):
                raise FileServerError(f"the master refused salt://{rel}: {info['error']}")
            hsum, size = info.get("hsum"), info.get("size")
            if (
                info.get("hash_type") != "sha256"
                or not isinstance(hsum, str)
                or not re.fullmatch(r"[0-9a-f]{64}", hsum)
                or not isinstance(size, int)
                or size < 0
            ):
                raise FileServerError(f"the master's hash of salt://{rel} is not usable")
            if target.is_file() and local_hash(target) == hsum:
                return target
            if self._download(rel, env, target, hsum, size):
                return target
            log.info("salt://%s changed on the master while it was fetched (try %d)", rel, attempt + 1)
        raise FileServerError(f"salt://{rel} kept changing on the master while it was fetched")

    def _download(self, rel: str, env: str, target: Path, hsum: str, size: int) -> bool:
        """Fetch ``rel`` in chunks into ``target``; False when what came does not match the hash
        (the file changed meanwhile); FileServerError for a broken answer."""
        _makedirs(target.parent)
        self.local_path(rel, env)  # again, now that the folders exist
        tmp = target.parent / f".{target.name}.{os.getpid()}.{threading.get_ident()}.part"
        digest = hashlib.sha256()
        offset = 0
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as fh:
                while True:
                    rep = self._ask(
                        {"cmd": "file_chunk", "path": rel, "saltenv": env, "offset": offset, "size": self.chunk_size},
                        f"salt://{rel}",
                    )
                    if rep.get("error"):
                        if rep.get("missing"):
                            return False
                        raise FileServerError(f"the master refused salt://{rel}: {rep['error']}")
                    data = rep.get("data")
                    if not isinstance(data, bytes) or len(data) > self.chunk_size:
                        raise FileServerError(f"the master sent a broken chunk of salt://{rel}")
                    if offset + len(data) > size:
                        return False  # longer than announced: changed meanwhile
                    fh.write(data)
                    digest.update(data)
                    offset += len(data)
                    if rep.get("eof") is True:
                        break
                    if not data:
                        raise FileServerError(f"the master sent an empty chunk of salt://{rel}")
            if offset != size or digest.hexdigest() != hsum:
                return False
            if target.is_dir() and not target.is_symlink():
                raise FileServerError(f"cannot cache salt://{rel}: {target} is a folder")
            os.replace(tmp, target)
            st = target.stat()
            _remember(str(target), (st.st_ino, st.st_size, st.st_mtime_ns), hsum)
        except OSError as exc:
            raise FileServerError(f"cannot cache salt://{rel} in {target.parent}: {exc.strerror or exc}") from None
        finally:
            try:
                tmp.unlink()
            except OSError:
                pass
        self.downloads += 1
        log.debug("fetched salt://%s (saltenv %s, %d bytes)", rel, env, size)
        return True

    def hash_file(self, url: str, saltenv: str) -> dict[str, Any] | None:
        """``{"hash_type", "hsum"}`` of the master's file, without fetching it."""
        path, env = split_url(url, saltenv)
        rel, env = check_rel(path), check_saltenv(env)
        info = self._ask({"cmd": "file_hash", "path": rel, "saltenv": env}, f"salt://{rel}")
        if info.get("error") or not isinstance(info.get("hsum"), str):
            return None
        return {"hash_type": "sha256", "hsum": info["hsum"]}

    def stat_file(self, url: str, saltenv: str) -> int | None:
        """The permission bits of the master's file (its ``file_hash`` answer), without fetching it;
        None when it is not there (or the master does not say)."""
        path, env = split_url(url, saltenv)
        rel, env = check_rel(path), check_saltenv(env)
        info = self._ask({"cmd": "file_hash", "path": rel, "saltenv": env}, f"salt://{rel}")
        mode = info.get("mode")
        if info.get("error") or not isinstance(mode, int) or isinstance(mode, bool):
            return None
        return mode & 0o7777


def _makedirs(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise FileServerError(f"cannot make the cache folder {folder}: {exc.strerror or exc}") from None
