"""The ``git`` command, run for gitfs with a time limit, no prompts and only the transports allowed.

gitfs drives the ``git`` command rather than a library (``docs/GITFS.md`` has the figures and
why): each call is a child process in its own process group, killed whole when its time limit
passes (a hanging server, an ``ssh`` that waits), with:

- ``GIT_TERMINAL_PROMPT=0`` and no configuration of the host's user (``HOME`` is the remote's
  cache folder): git never asks anything, and reads no ``~/.gitconfig``;
- ``GIT_ALLOW_PROTOCOL=file:git:http:https:ssh``: a remote URL cannot run a command
  (``ext::``);
- credentials handed over through the environment, never on the command line (``ps`` shows
  command lines): ``user``/``password`` and an ssh key's ``passphrase`` are answered by a tiny
  askpass script reading ``BRINY_GIT_*`` variables; the ssh key through ``GIT_SSH_COMMAND``.

Where it runs: in the thread that asks (the master's workers, ``briny-run``); never on a loop.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Mapping
from typing import Any

from briny.common.atomicfile import write_atomic
from briny.common.exceptions import GitError

ALLOWED_PROTOCOLS = "file:git:http:https:ssh"
ASKPASS = """#!/bin/sh
case "$1" in
  Username*|username*) printf '%s\\n' "$BRINY_GIT_USERNAME" ;;
  *assphrase*|*passphrase*) printf '%s\\n' "$BRINY_GIT_PASSPHRASE" ;;
  *) printf '%s\\n' "$BRINY_GIT_PASSWORD" ;;
esac
"""


def askpass_script(folder: str) -> str:
    """The askpass script in ``folder`` (written once, mode 0700)."""
    path = os.path.join(folder, "askpass.sh")
    if not os.path.exists(path):
        write_atomic(path, ASKPASS, mode=0o700)
    return path


@functools.cache
def version() -> tuple[int, int]:
    """The installed git's (major, minor); (0, 0) when it cannot be told."""
    try:
        out = subprocess.run(["git", "version"], capture_output=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return (0, 0)
    found = re.search(rb"(\d+)\.(\d+)", out or b"")
    return (int(found[1]), int(found[2])) if found else (0, 0)


def url_args(url: str, what: str = "git") -> list[str]:
    """``url`` as a git command's argument that is never read as an option: after
    ``--end-of-options`` (git 2.24 and later); an older git refuses a URL starting with ``-``."""
    if version() >= (2, 24):
        return ["--end-of-options", url]
    if url.startswith("-"):
        raise GitError(f"{what}: a URL starting with '-' needs git 2.24 or later")
    return [url]


def environment(home: str, auth: Mapping[str, Any] | None = None, timeout: float = 60) -> dict[str, str]:
    """The environment of a git call for one remote (``auth``: its user, password, privkey,
    passphrase, ssl_verify)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "LANG": "C",
        "LC_ALL": "C",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_ASKPASS": askpass_script(home),
        "SSH_ASKPASS": askpass_script(home),
        "SSH_ASKPASS_REQUIRE": "force",
        "BRINY_GIT_USERNAME": "",
        "BRINY_GIT_PASSWORD": "",
        "BRINY_GIT_PASSPHRASE": "",
    }
    auth = auth or {}
    if auth.get("user"):
        env["BRINY_GIT_USERNAME"] = str(auth["user"])
    if auth.get("password"):
        env["BRINY_GIT_PASSWORD"] = str(auth["password"])
    if auth.get("passphrase"):
        env["BRINY_GIT_PASSPHRASE"] = str(auth["passphrase"])
    ssh = [
        "ssh",
        "-o",
        "BatchMode=no",  # the askpass script answers a key's passphrase; nothing else asks
        "-o",
        "PasswordAuthentication=no",
        "-o",
        "KbdInteractiveAuthentication=no",
        "-o",
        f"ConnectTimeout={max(1, int(timeout))}",
        "-o",
        "StrictHostKeyChecking=accept-new",
        "-o",
        f"UserKnownHostsFile={os.path.join(home, 'known_hosts')}",
        "-F",
        "/dev/null",
    ]
    if auth.get("privkey"):
        ssh += ["-i", str(auth["privkey"]), "-o", "IdentitiesOnly=yes"]
    env["GIT_SSH_COMMAND"] = shlex.join(ssh)
    return env


def run(
    args: list[str],
    *,
    env: Mapping[str, str],
    timeout: float,
    cwd: str | None = None,
    what: str = "git",
    data: bytes | None = None,
) -> bytes:
    """Run ``git ARGS`` (``data`` on its stdin); its output, or GitError naming ``what`` (a time
    limit passed: the whole process group is killed)."""
    try:
        proc = subprocess.Popen(
            ["git", *args],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise GitError(f"{what}: the git command is not installed (gitfs needs it)") from None
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise GitError(f"{what}: no answer within {timeout:g} s (killed)") from None
    if proc.returncode != 0:
        text = (err or b"").decode("utf-8", "replace").strip().splitlines()
        reason = "; ".join(line.strip() for line in text[-3:]) or f"exit status {proc.returncode}"
        raise GitError(f"{what}: {reason}")
    return out or b""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # a grandchild that left the group still holds a pipe
        proc.kill()
