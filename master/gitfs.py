"""The gitfs file server backend: branches and tags of git remotes served as saltenvs.

Every remote of ``gitfs_remotes`` (:mod:`briny.master.gitremotes`) is fetched into the
master's cache, ``<cachedir>/gitfs/<remote id>/``:

- ``repo.git``: a bare repository; each update runs ``git fetch --prune --force`` of the
  remote's branches and tags into it (:mod:`briny.master.gitcmd`: a time limit,
  ``gitfs_timeout`` seconds, no prompts), so a force-push or a deleted branch is followed;
- ``trees/<key>/``: each served commit's tree (its ``root``, under its ``mountpoint``)
  exported once (``git read-tree`` + ``checkout-index`` into a new folder, renamed in place); a tree is never changed once written, so the roots
  code serves it as it serves ``file_roots`` (listings, hashes, chunks, the path checks),
  except that a symlink leaving the tree is never followed;
- ``state.json``: the env → tree map of the last good update, written atomically. The
  master daemon and ``briny-run fileserver.update`` share it: whoever fetches (under the
  remote's ``lock`` file) writes it, and the serving side rereads it when it changed.

A remote that cannot be fetched (gone, refused credentials, a server that hangs, a root
missing in a ref) is named in the log and in :meth:`GitFS.update`'s answer, and keeps
serving what its last good update exported; the other remotes are not held up.

Where it runs: :meth:`GitFS.update` in a worker thread or ``briny-run`` (it runs git and
writes the cache); :meth:`GitFS.roots` in the file server's workers (stats and small reads,
behind this object's lock).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import threading
import time
from typing import Any

from briny.common import config
from briny.common.atomicfile import write_atomic
from briny.common.exceptions import GitError
from briny.common.urlauth import redact_http_basic_auth
from briny.master import gitcmd, gitexport, gitremotes
from briny.master.gitremotes import Remote

log = logging.getLogger(__name__)

RECHECK = 1.0  # seconds roots() trusts what it read of the remotes' state files


class GitFS:
    """The gitfs backend of one master config. Thread-safe."""

    name = "gitfs"

    def __init__(self, opts: dict[str, Any]) -> None:
        self.opts = opts
        self.cache = os.path.join(str(config.setting(opts, "cachedir", "master")), "gitfs")
        self.remotes, self.errors = gitremotes.parse(opts)
        for remote in [
            r
            for r in self.remotes
            if os.path.dirname(os.path.normpath(self._folder(r))) != os.path.normpath(self.cache)
        ]:
            self.errors.append(f"gitfs remote {remote.label}: its cache folder leaves {self.cache}: left out")
            self.remotes.remove(remote)
        for error in self.errors:
            log.error("gitfs: %s", error)
        self.timeout = config.number(opts, "gitfs_timeout")  # seconds one git command may take
        self._lock = threading.Lock()
        self._states: dict[str, tuple[tuple[int, int], dict[str, Any]]] = {}  # remote id -> (stamp, state)
        self._last: dict[str, float] = {}  # remote id -> monotonic time of its last update here (_lock)
        self._roots: tuple[float, dict[str, list[str]]] | None = None  # (monotonic time, roots())

    def _folder(self, remote: Remote) -> str:
        """The remote's cache folder, ``<cachedir>/gitfs/<remote id>``."""
        return os.path.join(self.cache, remote.id)

    # -- serving --------------------------------------------------------------------------
    def _state(self, remote: Remote) -> dict[str, Any]:
        path = os.path.join(self._folder(remote), "state.json")
        try:
            st = os.stat(path)
        except OSError:
            return {}
        stamp = (st.st_ino, st.st_mtime_ns)
        with self._lock:
            hit = self._states.get(remote.id)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        try:
            with open(path, encoding="utf-8") as fh:
                state = json.load(fh)
        except (OSError, ValueError) as exc:
            log.error("gitfs remote %s: its cache state %s cannot be read: %s", remote.label, path, exc)
            return {}
        with self._lock:
            self._states[remote.id] = (stamp, state)
        return state if isinstance(state, dict) else {}

    def roots(self) -> dict[str, list[str]]:
        """``{saltenv: [tree folder, ...]}`` in remote order, from the last good updates
        (whitelist, blacklist and fallbacks applied); the remotes' state files are checked at
        most once a second (``RECHECK``), and at once after an update in this process."""
        now = time.monotonic()
        with self._lock:
            cached = self._roots
        if cached is not None and now - cached[0] < RECHECK:
            return cached[1]
        found = self._read_roots()
        with self._lock:
            self._roots = (now, found)
        return found

    def _read_roots(self) -> dict[str, list[str]]:
        per_remote = [(r, self._state(r)) for r in self.remotes]
        found: dict[str, list[str]] = {}
        for remote, state in per_remote:
            for env, tree in (state.get("envs") or {}).items():
                if gitremotes.exposed(env, self.opts):
                    found.setdefault(env, []).append(os.path.join(self._folder(remote), "trees", tree))
        for remote, state in per_remote:
            tree = state.get("fallback")
            if not tree:
                continue
            for env, dirs in found.items():
                if env not in (state.get("envs") or {}):
                    dirs.append(os.path.join(self._folder(remote), "trees", tree))
        return found

    def envs(self) -> list[str]:
        return sorted(self.roots())

    def strict(self, root: str) -> bool:
        """Whether ``root`` is one of this backend's trees: symlinks never leave it."""
        return root.startswith(self.cache + os.sep)

    # -- updating -------------------------------------------------------------------------
    def due(self) -> list[Remote]:
        """The remotes whose own ``update_interval`` has passed since this object updated them."""
        now = time.monotonic()
        with self._lock:
            return [r for r in self.remotes if now - self._last.get(r.id, -1e18) >= r.update_interval]

    def update(self, remotes: list[Remote] | None = None) -> dict[str, Any]:
        """Fetch ``remotes`` (all by default) and export their new commits (worker).

        ``{"changed": bool, "remotes": {label: "up to date" | "updated" | "error: ..."},
        "errors": [...]}``; an error leaves that remote serving its last good fetch."""
        report: dict[str, Any] = {"changed": False, "remotes": {}, "errors": list(self.errors)}
        for remote in self.remotes if remotes is None else remotes:
            with self._lock:
                self._last[remote.id] = time.monotonic()
            try:
                changed = self._update_one(remote)
            except (GitError, OSError) as exc:
                message = str(exc) if isinstance(exc, GitError) else f"{type(exc).__name__}: {exc}"
                log.error(
                    "gitfs remote %s could not be updated (serving its last good fetch): %s", remote.label, message
                )
                report["remotes"][remote.label] = f"error: {message}"
                report["errors"].append(f"{remote.label}: {message}")
                continue
            report["remotes"][remote.label] = "updated" if changed else "up to date"
            report["changed"] = report["changed"] or changed
        with self._lock:
            self._roots = None
        return report

    def _update_one(self, remote: Remote) -> bool:
        folder = self._folder(remote)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with _Flock(os.path.join(folder, "lock"), self.timeout, remote.label):
            env = gitcmd.environment(folder, remote.auth, self.timeout)
            repo = os.path.join(folder, "repo.git")
            what = f"gitfs remote {remote.label}"
            if not os.path.isdir(os.path.join(repo, "objects")):
                gitcmd.run(["init", "-q", "--bare", repo], env=env, timeout=self.timeout, what=what)
            options = [
                "-c",
                f"http.sslVerify={'true' if remote.ssl_verify else 'false'}",
                "-c",
                "http.lowSpeedLimit=1",
                "-c",
                f"http.lowSpeedTime={max(1, int(self.timeout))}",
                "-c",
                "credential.helper=",
            ]
            gitcmd.run(
                [
                    *options,
                    "-C",
                    repo,
                    "fetch",
                    "-q",
                    "--prune",
                    "--force",
                    "--no-write-fetch-head",
                    *gitcmd.url_args(remote.url, f"{what}: fetch"),
                    "+refs/heads/*:refs/heads/*",
                    "+refs/tags/*:refs/tags/*",
                ],
                env=env,
                timeout=self.timeout,
                what=f"{what}: fetch",
            )
            refs = self._refs(repo, env, what)
            mapped = gitremotes.envs_of(remote, refs)
            old = self._read_state(folder)
            envs: dict[str, str] = {}
            commits: dict[str, list[str]] = {}
            trees = os.path.join(folder, "trees")
            os.makedirs(trees, mode=0o755, exist_ok=True)
            for saltenv, (commit, root, mount) in sorted(mapped.items()):
                try:
                    before = (old.get("commits") or {}).get(saltenv)
                    previous = before[0] if isinstance(before, list) and before[1:] == [root, mount] else None
                    envs[saltenv] = gitexport.export(
                        repo, env, trees, commit, root, mount, self.timeout, what, previous=previous
                    )
                    commits[saltenv] = [commit, root, mount]
                except GitError as exc:
                    log.error("%s: saltenv %s is not served: %s", what, saltenv, exc)
            fallback = None
            if remote.fallback:
                found = gitremotes.envs_of(
                    Remote(url="", id="", label="", base=remote.fallback, ref_types=remote.ref_types), refs
                ).get("base")
                if found is None:
                    log.error("%s: fallback ref %s does not exist", what, remote.fallback)
                else:
                    fallback = gitexport.export(
                        repo, env, trees, found[0], remote.root, remote.mountpoint, self.timeout, what
                    )
            state = {
                "url": redact_http_basic_auth(remote.url),
                "envs": envs,
                "commits": commits,
                "fallback": fallback,
                "updated": time.time(),
            }
            changed = {k: v for k, v in old.items() if k != "updated"} != {
                k: v for k, v in state.items() if k != "updated"
            }
            write_atomic(os.path.join(folder, "state.json"), json.dumps(state, sort_keys=True).encode(), 0o600)
            self._prune(
                folder,
                keep=set(envs.values()) | set((old.get("envs") or {}).values()) | {fallback, old.get("fallback")},
            )
            if changed:
                log.info("%s: updated, saltenvs %s", what, ", ".join(sorted(envs)) or "(none)")
            return changed

    @staticmethod
    def _read_state(folder: str) -> dict[str, Any]:
        try:
            with open(os.path.join(folder, "state.json"), encoding="utf-8") as fh:
                state = json.load(fh)
        except (OSError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def _refs(self, repo: str, env: dict[str, str], what: str) -> dict[str, dict[str, str]]:
        out = gitcmd.run(
            [
                "-C",
                repo,
                "for-each-ref",
                "--format=%(refname)%09%(objectname)%09%(*objectname)",
                "refs/heads",
                "refs/tags",
            ],
            env=env,
            timeout=self.timeout,
            what=what,
        )
        refs: dict[str, dict[str, str]] = {"branch": {}, "tag": {}}
        for line in out.decode("utf-8", "replace").splitlines():
            name, obj, peeled = (line.split("\t") + ["", ""])[:3]
            commit = peeled or obj
            if name.startswith("refs/heads/"):
                refs["branch"][name[len("refs/heads/") :]] = commit
            elif name.startswith("refs/tags/"):
                refs["tag"][name[len("refs/tags/") :]] = commit
        return refs

    @staticmethod
    def _prune(folder: str, keep: set[Any]) -> None:
        """Remove the trees neither this update nor the one before serves (those may still be
        read by a request that began before)."""
        trees = os.path.join(folder, "trees")
        try:
            names = os.listdir(trees)
        except FileNotFoundError:
            return
        for name in names:
            if name not in keep and not name.startswith(".tmp-"):
                shutil.rmtree(os.path.join(trees, name), ignore_errors=True)

    def clear_cache(self) -> list[str]:
        """Remove the whole gitfs cache (the next update fetches every remote anew)."""
        removed = []
        for remote in self.remotes:
            folder = self._folder(remote)
            if os.path.isdir(folder):
                with _Flock(os.path.join(folder, "lock"), self.timeout, remote.label):
                    shutil.rmtree(folder)
                removed.append(remote.label)
        with self._lock:
            self._states.clear()
            self._roots = None
            self._last.clear()
        return removed


class _Flock:
    """The remote's lock file, taken for an update (another process may be updating it)."""

    def __init__(self, path: str, timeout: float, label: str) -> None:
        self.path, self.timeout, self.label = path, timeout, label
        self.fd = -1

    def __enter__(self) -> _Flock:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    raise GitError(
                        f"gitfs remote {self.label}: another update held its lock for {self.timeout:g} s"
                    ) from None
                time.sleep(0.05)  # worker thread: waiting for another process's update

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
