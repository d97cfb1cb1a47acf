"""The ``salt://`` seam: how the compiler, Jinja and states reach the file tree.

Runs wherever SLS files are rendered. :class:`FileClient` is the narrow
interface; :class:`LocalFileClient` serves ``file_roots`` straight from disk
(``briny-call --local``, and the master's own compiles). The minion's remote
client (issue "Highstate across the fleet") implements the same interface by
asking the master.

Paths are checked before they touch the disk (:func:`clean_path`): no NUL,
no absolute path, no ``..`` component, no backslash tricks. Symlinks placed
inside a root are followed unless ``fileserver_followsymlinks`` is False, in
which case a link that leaves its root is refused.
"""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .exceptions import FileServerError

if TYPE_CHECKING:
    from .jobcontext import JobContext


def split_url(url: str, saltenv: str = "base") -> tuple[str, str]:
    """``salt://a/b?saltenv=dev`` → (``a/b``, ``dev``); a bare path keeps ``saltenv``."""
    if url.startswith("salt://"):
        rest = url[len("salt://") :]
        path, _, query = rest.partition("?")
        if query:
            params = urllib.parse.parse_qs(query)
            if "saltenv" in params:
                saltenv = params["saltenv"][-1]
            elif "env" in params:
                saltenv = params["env"][-1]
        return path, saltenv
    return url, saltenv


def clean_path(path: str) -> str:
    """A relative, normalised path inside a root, or FileServerError."""
    if not isinstance(path, str) or "\x00" in path:
        raise FileServerError("path contains a NUL byte")
    decoded = urllib.parse.unquote(path)
    for candidate in (path, decoded):
        if candidate.startswith(("/", "\\")) or (len(candidate) > 1 and candidate[1] == ":"):
            raise FileServerError(f"absolute path {path!r} is not allowed")
        parts = candidate.replace("\\", "/").split("/")
        if ".." in parts:
            raise FileServerError(f"path {path!r} climbs out of the file roots")
    return "/".join(p for p in path.split("/") if p not in ("", "."))


class FileClient(Protocol):
    """What the compiler and templates need from a file tree."""

    def envs(self) -> list[str]: ...

    def find(self, path: str, saltenv: str) -> Path | None:
        """Local path of ``path`` (relative to the roots) in ``saltenv``, or None."""

    def get_text(self, path: str, saltenv: str) -> str | None:
        """Text of ``path`` in ``saltenv``, or None when it is not there."""

    def list_files(self, saltenv: str) -> list[str]: ...

    def list_states(self, saltenv: str) -> list[str]: ...

    def cache_file(self, url: str, saltenv: str) -> str | None:
        """A local path holding the file ``url`` names, or None."""


def states_of(files: list[str]) -> list[str]:
    """SLS names of a listing: ``a/b.sls`` and ``a/b/init.sls`` are ``a.b``."""
    states = []
    for rel in files:
        if not rel.endswith(".sls"):
            continue
        stem = rel[:-4]
        if stem.endswith("/init"):
            stem = stem[:-5]
        elif stem == "init":
            continue
        if "." in stem:
            continue
        states.append(stem.replace("/", "."))
    return sorted(set(states))


class FileClientBase:
    """What every file client derives from ``find`` and ``list_files``."""

    def envs(self) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def find(self, path: str, saltenv: str) -> Path | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def list_files(self, saltenv: str) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def get_text(self, path: str, saltenv: str) -> str | None:
        full = self.find(path, saltenv)
        if full is None or not full.is_file():
            return None
        try:
            return full.read_text(encoding="utf-8")
        except OSError as exc:
            raise FileServerError(f"cannot read salt://{path}: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:
            raise FileServerError(f"salt://{path} is not UTF-8 text") from exc

    def list_states(self, saltenv: str) -> list[str]:
        return states_of(self.list_files(saltenv))

    def cache_file(self, url: str, saltenv: str) -> str | None:
        path, env = split_url(url, saltenv)
        full = self.find(path, env)
        return str(full) if full is not None and full.is_file() else None

    def stat_file(self, url: str, saltenv: str) -> int | None:
        """The permission bits of the file ``url`` names (``cp.stat_file``), or None."""
        path, env = split_url(url, saltenv)
        full = self.find(path, env)
        if full is None or not full.is_file():
            return None
        return full.stat().st_mode & 0o7777

    def find_sls(self, sls: str, saltenv: str) -> tuple[str, Path] | None:
        """``a.b`` → (``a/b.sls`` or ``a/b/init.sls``, its path), first match wins."""
        return find_sls(self, sls, saltenv)


class LocalFileClient(FileClientBase):
    """Serves ``file_roots`` from the local disk, first root wins."""

    def __init__(self, file_roots: dict[str, list[str]], followsymlinks: bool = True) -> None:
        self.source = (file_roots or {}, followsymlinks)
        self.roots = {env: [Path(d) for d in dirs] for env, dirs in (file_roots or {}).items()}
        self.followsymlinks = followsymlinks
        self._listing: dict[str, list[str]] = {}

    def envs(self) -> list[str]:
        return list(self.roots)

    def _roots(self, saltenv: str) -> list[Path]:
        if saltenv not in self.roots:
            return []
        return self.roots[saltenv]

    def find(self, path: str, saltenv: str) -> Path | None:
        rel = clean_path(path)
        for root in self._roots(saltenv):
            full = root / rel
            if not full.exists():
                continue
            if not self.followsymlinks:
                try:
                    real_root = root.resolve()
                    if not full.resolve().is_relative_to(real_root):
                        raise FileServerError(f"path {path!r} leaves the file root through a symlink")
                except OSError:
                    continue
            return full
        return None

    def list_files(self, saltenv: str) -> list[str]:
        if saltenv not in self._listing:
            seen: set[str] = set()
            for root in self._roots(saltenv):
                if not root.is_dir():
                    continue
                for dirpath, dirnames, filenames in os.walk(root, followlinks=self.followsymlinks):
                    dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                    base = Path(dirpath).relative_to(root)
                    for fn in filenames:
                        rel = (base / fn).as_posix()
                        seen.add(rel[2:] if rel.startswith("./") else rel)
            self._listing[saltenv] = sorted(seen)
        return self._listing[saltenv]


def find_sls(client: FileClient, sls: str, saltenv: str) -> tuple[str, Path] | None:
    """Resolve an SLS name through any client: ``a/b.sls`` before ``a/b/init.sls``."""
    base = sls.replace(".", "/")
    for rel in (f"{base}.sls", f"{base}/init.sls"):
        try:
            full = client.find(rel, saltenv)
        except FileServerError:
            return None
        if full is not None and full.is_file():
            return rel, full
    return None


def get_client(opts: dict[str, Any], job: JobContext | None = None) -> FileClient:
    """The file client of a job: its context's (``__job__.file_client``: the minion's remote
    client, or the local roots the executor gave it), else one serving these opts' ``file_roots``
    from disk, kept in ``job`` (so one job walks the roots once) when there is one."""
    if job is not None and job.file_client is not None:
        return job.file_client
    roots = opts.get("file_roots") or {}
    follow = bool(opts.get("fileserver_followsymlinks", True))
    cached = job.local_files if job is not None else None
    if not isinstance(cached, LocalFileClient) or cached.source != (roots, follow):
        cached = LocalFileClient(roots, follow)
        if job is not None:
            job.local_files = cached
    return cached
