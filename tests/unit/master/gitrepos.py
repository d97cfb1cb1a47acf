"""Bare git repositories for gitfs tests, made with the ``git`` command, and a ``git daemon``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.serverproc import free_port
from tests.waiting import wait_until

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@x",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@x",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def git(*args: str, cwd: Path | str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True, timeout=30).stdout


def make_repo(tmp: Path, name: str, files: dict[str, str], branch: str = "master") -> tuple[Path, Path]:
    """(bare repository, its working clone) with ``files`` committed on ``branch``."""
    bare = tmp / f"{name}.git"
    work = tmp / f"{name}-work"
    git("init", "-q", "--bare", "-b", branch, str(bare))
    git("init", "-q", "-b", branch, str(work))
    git("remote", "add", "origin", str(bare), cwd=work)
    commit(work, files, branch=branch)
    return bare, work


def commit(work: Path, files: dict[str, str], branch: str = "master", symlinks: dict[str, str] | None = None) -> str:
    """Write ``files`` (and ``symlinks``) on ``branch`` of ``work``, commit and push."""
    if git("branch", "--show-current", cwd=work).strip() != branch:
        try:
            git("checkout", "-q", branch, cwd=work)
        except subprocess.CalledProcessError:
            git("checkout", "-q", "-b", branch, cwd=work)
    for rel, text in files.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for rel, target in (symlinks or {}).items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, work / rel)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "c", "--allow-empty", cwd=work)
    git("push", "-q", "-f", "origin", branch, cwd=work)
    return git("rev-parse", "HEAD", cwd=work).strip()


@contextmanager
def git_daemon(base: Path) -> Iterator[int]:
    """``git daemon`` serving every repository under ``base`` on 127.0.0.1 (its port), stopped by pid."""
    port = free_port()
    proc = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--export-all", f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}", str(base)],
        env=GIT_ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_until(lambda: _listening(port), timeout=10, what="git daemon listening")
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


@contextmanager
def silent_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts and never answers (a hanging git server)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        sock.close()
