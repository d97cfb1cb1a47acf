"""What gitfs costs with each git library: the ``git`` command, pygit2 (libgit2) and dulwich.

The fleet of issue 23: a master with 10 remotes holding 5,000 files between them (500 each, in
nested folders), updated every 60 s while minions fetch files. For each candidate it measures:

- ``first fetch``: the 10 remotes fetched into an empty cache;
- ``idle update``: the 10 remotes fetched again with nothing new (what the master pays every
  ``gitfs_update_interval`` on most ticks);
- ``update, 1 commit``: one file changed in each remote, then the 10 fetched, plus what the
  candidate needs before it can serve the new commit (for the ``git`` command: the tree exported
  to the cache with ``git archive``; the libraries read objects in place);
- ``list 5,000``: the file list of every remote's branch (``file_list`` when its cache is cold);
- ``serve 1,000``: 1,000 files read (``file_hash``/``file_chunk`` for 1,000 minions, one file
  each) right after the update, and ``again`` 2 s later (briny's file server hashes a file
  written in the last 2 s each time it is asked, then keeps its hash).

Run: ``.venv/bin/python bench/gitfs.py`` (``pip install pygit2 dulwich`` for those two; a
candidate whose library is missing is skipped). Remotes are local ``file://`` repositories, so
network time is not in the figures: what is measured is the library's own work.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

REMOTES = 10
FILES = 500  # per remote


def _git(*args: str, cwd: str | None = None, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=data, check=True, capture_output=True).stdout


def make_remote(path: str, files: int) -> None:
    """A bare repository with ``files`` files in one commit on ``master`` (git fast-import)."""
    _git("init", "-q", "--bare", "-b", "master", path)
    lines = ["commit refs/heads/master", "committer b <b@x> 1700000000 +0000", "data 4", "init"]
    for i in range(files):
        body = f"file {i}\n".encode() * 20
        lines.append(f"M 644 inline d{i % 10}/s{i % 7}/f{i}.sls")
        lines.append(f"data {len(body)}")
        lines.append(body.decode())
    _git("fast-import", "--quiet", cwd=path, data=("\n".join(lines) + "\n").encode())


def change_remote(path: str, n: int) -> None:
    body = f"changed {n}\n".encode()
    head = _git("rev-parse", "master", cwd=path).decode().strip()
    stream = (
        (
            f"commit refs/heads/master\ncommitter b <b@x> {1700000000 + n} +0000\ndata 3\nchg\nfrom {head}\n"
            f"M 644 inline d0/s0/f0.sls\ndata {len(body)}\n"
        ).encode()
        + body
        + b"\n"
    )
    _git("fast-import", "--quiet", cwd=path, data=stream)


class GitCli:
    name = "git command"

    def __init__(self, cache: str) -> None:
        self.cache = cache
        self.exported: dict[str, str] = {}

    def fetch(self, i: int, url: str) -> None:
        repo = os.path.join(self.cache, f"r{i}")
        if not os.path.isdir(repo):
            _git("init", "-q", "--bare", repo)
        _git("-C", repo, "fetch", "-q", "--prune", "--force", url, "+refs/heads/*:refs/heads/*")
        sha = _git("-C", repo, "rev-parse", "master").decode().strip()
        dest = os.path.join(self.cache, "trees", f"r{i}", sha)
        if not os.path.isdir(dest):
            os.makedirs(dest)
            archive = subprocess.Popen(["git", "-C", repo, "archive", sha], stdout=subprocess.PIPE)
            subprocess.run(["tar", "-x", "-C", dest], stdin=archive.stdout, check=True)
            archive.wait()
        self.exported[f"r{i}"] = dest

    def listing(self, i: int) -> list[str]:
        root = self.exported[f"r{i}"]
        out = []
        for dirpath, _dirs, files in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            out.extend(os.path.join(rel, f) for f in files)
        return out

    def read(self, i: int, path: str) -> bytes:
        with open(os.path.join(self.exported[f"r{i}"], path), "rb") as fh:
            return fh.read()


class BrinyGitfs:
    """briny's own gitfs (``master/gitfs.py``: the git command, trees exported to the cache,
    served by the file server's roots code)."""

    name = "briny gitfs"

    def __init__(self, cache: str) -> None:
        self.cache = cache
        self.fs: Any = None

    def fetch_all(self, urls: list[str]) -> None:
        from briny.master.fileserver import FileServer

        if self.fs is None:
            remotes = [{u: [{"name": f"r{i}"}]} for i, u in enumerate(urls)]
            self.fs = FileServer({"cachedir": self.cache, "fileserver_backend": ["gitfs"], "gitfs_remotes": remotes})
        report = self.fs.update_backends()["gitfs"]
        assert not report["errors"], report

    def listing(self, i: int) -> list[str]:
        if i == 0:
            self.fs.update()  # cold: the walk is measured
        files: list[str] = self.fs.file_list("base")["files"]
        return files if i == 0 else []

    def read(self, i: int, path: str) -> bytes:
        self.fs.file_hash(path, "base")
        data: bytes = self.fs.read_chunk(path, "base", 0)["data"]
        return data


class Pygit2:
    name = "pygit2"

    def __init__(self, cache: str) -> None:
        import pygit2

        self.pygit2 = pygit2
        self.cache = cache
        self.repos: dict[int, Any] = {}

    def fetch(self, i: int, url: str) -> None:
        path = os.path.join(self.cache, f"r{i}")
        if i not in self.repos:
            repo = self.pygit2.init_repository(path, bare=True)
            repo.remotes.create("origin", url, "+refs/heads/*:refs/heads/*")
            self.repos[i] = repo
        self.repos[i].remotes["origin"].fetch(prune=self.pygit2.enums.FetchPrune.PRUNE)

    def _tree(self, i: int) -> Any:
        repo = self.repos[i]
        return repo.revparse_single("refs/heads/master").peel(self.pygit2.Commit).tree

    def listing(self, i: int) -> list[str]:
        out: list[str] = []

        def walk(tree: Any, prefix: str) -> None:
            for entry in tree:
                if entry.type_str == "tree":
                    walk(entry, prefix + entry.name + "/")
                else:
                    out.append(prefix + entry.name)

        walk(self._tree(i), "")
        return out

    def read(self, i: int, path: str) -> bytes:
        data: bytes = (self._tree(i) / path).data
        return data


class Dulwich:
    name = "dulwich"

    def __init__(self, cache: str) -> None:
        from dulwich import porcelain
        from dulwich.repo import Repo

        self.porcelain = porcelain
        self.Repo = Repo
        self.cache = cache
        self.repos: dict[int, Any] = {}

    def fetch(self, i: int, url: str) -> None:
        path = os.path.join(self.cache, f"r{i}")
        if i not in self.repos:
            self.repos[i] = self.Repo.init_bare(path, mkdir=True)
        repo = self.repos[i]
        from dulwich.client import get_transport_and_path

        client, rpath = get_transport_and_path(url)
        result = client.fetch(rpath, repo)
        for ref, sha in result.refs.items():
            if ref.startswith(b"refs/heads/"):
                repo.refs[ref] = sha

    def _tree(self, i: int) -> Any:
        repo = self.repos[i]
        return repo[repo[b"refs/heads/master"].tree]

    def listing(self, i: int) -> list[str]:
        from dulwich.object_store import iter_tree_contents

        repo = self.repos[i]
        return [e.path.decode() for e in iter_tree_contents(repo.object_store, self._tree(i).id)]

    def read(self, i: int, path: str) -> bytes:
        from dulwich.object_store import tree_lookup_path

        repo = self.repos[i]
        _mode, sha = tree_lookup_path(repo.__getitem__, self._tree(i).id, path.encode())
        data: bytes = repo[sha].data
        return data


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench(kind: type, remotes: list[str], work: str) -> dict[str, float]:
    cache = tempfile.mkdtemp(dir=work, prefix="cache-")
    cand = kind(cache)
    got: dict[str, float] = {}
    if hasattr(cand, "fetch_all"):
        cand.fetch = lambda i, u: cand.fetch_all(remotes) if i == 0 else None
    got["first fetch"] = timed(lambda: [cand.fetch(i, u) for i, u in enumerate(remotes)])
    got["idle update"] = timed(lambda: [cand.fetch(i, u) for i, u in enumerate(remotes)])
    for n, u in enumerate(remotes):
        change_remote(u.removeprefix("file://"), n + len(kind.name) * 100)
    got["update, 1 commit"] = timed(lambda: [cand.fetch(i, u) for i, u in enumerate(remotes)])
    lists: list[list[str]] = []
    got["list 5,000"] = timed(lambda: lists.extend(cand.listing(i) for i in range(len(remotes))))
    if kind is not BrinyGitfs:  # briny serves the 10 remotes as one saltenv: the first holding a path wins
        assert sum(len(x) for x in lists) == len(remotes) * FILES, [len(x) for x in lists]
    paths = [f"d{k % 10}/s{k % 7}/f{k}.sls" for k in range(FILES)]
    got["serve 1,000"] = timed(lambda: [cand.read(k % len(remotes), paths[k % FILES]) for k in range(1000)])
    time.sleep(2.1)  # briny trusts a cached hash only for files older than 2 s (racy file times)
    got["serve 1,000 again"] = timed(lambda: [cand.read(k % len(remotes), paths[k % FILES]) for k in range(1000)])
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--remotes", type=int, default=REMOTES)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gitfs-bench-")
    try:
        remotes = []
        for i in range(args.remotes):
            path = os.path.join(work, f"remote{i}.git")
            make_remote(path, FILES)
            remotes.append(f"file://{path}")
        kinds: list[type] = [BrinyGitfs, GitCli]
        for kind in (Pygit2, Dulwich):
            try:
                kind(work)
            except ImportError:
                print(f"{kind.name}: not installed, skipped", file=sys.stderr)
                continue
            kinds.append(kind)
        results = {k.name: bench(k, remotes, work) for k in kinds}
        cols = list(next(iter(results.values())))
        print(f"| candidate | {' | '.join(cols)} |")
        print("|---|" + "---:|" * len(cols))
        for name, got in results.items():
            print(f"| {name} | " + " | ".join(f"{got[c] * 1000:.0f} ms" for c in cols) + " |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
