"""gitfs trees: one commit's files (its ``root``, under its ``mountpoint``) written to a folder.

A tree is written once into a new folder and renamed into place; it is never changed after,
so the file server may serve it as it serves ``file_roots``. A tree is made whole from git
(``git read-tree`` into a private index, then ``git checkout-index``), or, when the same env
was served from an earlier commit with the same root and mountpoint, from that tree: its files
hard-linked into the new folder, then only what ``git diff-tree`` says changed removed and
written anew, so a one-file commit costs one file, not the whole tree (``docs/GITFS.md``).

Where it runs: the thread that updates a remote (a worker, ``briny-run``), under the
remote's lock.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import threading

from briny.master import gitcmd


def tree_key(commit: str, root: str, mount: str) -> str:
    """The folder name of ``commit:root`` mounted at ``mount``."""
    return hashlib.sha256(f"{commit}\0{root}\0{mount}".encode()).hexdigest()[:32]


def export(
    repo: str,
    env: dict[str, str],
    trees: str,
    commit: str,
    root: str,
    mount: str,
    timeout: float,
    what: str,
    previous: str | None = None,
) -> str:
    """The key of the tree of ``commit:root`` at ``mount`` under ``trees``, written when new;
    ``previous``: an earlier commit of the same root and mountpoint whose tree exists."""
    key = tree_key(commit, root, mount)
    dest = os.path.join(trees, key)
    if os.path.isdir(dest):
        return key
    tmp = os.path.join(trees, f".tmp-{key}-{os.getpid()}-{threading.get_ident()}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp, mode=0o755)
    spec = f"{commit}:{root}" if root else commit
    index = os.path.join(trees, f".index-{key}-{os.getpid()}-{threading.get_ident()}")
    git_env = {**env, "GIT_INDEX_FILE": index}
    base = ["--git-dir", repo, "--work-tree", tmp]
    prefix = f"{mount}/" if mount else ""
    old_dir = os.path.join(trees, tree_key(previous, root, mount)) if previous else ""
    try:
        gitcmd.run(
            [*base, "read-tree", spec],
            env=git_env,
            timeout=timeout,
            what=f"{what}: root {root or '/'} of {commit[:12]}",
        )
        if previous and os.path.isdir(old_dir):
            old_spec = f"{previous}:{root}" if root else previous
            changed = _changes(repo, env, old_spec, spec, timeout, what)
            _link_tree(old_dir, tmp)
            for path, _status in changed:
                _remove(tmp, prefix + path)
            wanted = "".join(f"{path}\0" for path, status in changed if status != "D")
            gitcmd.run(
                [*base, "checkout-index", "-f", "-z", "--stdin", f"--prefix={prefix}"],
                env=git_env,
                timeout=timeout,
                what=what,
                cwd=tmp,
                data=wanted.encode("utf-8", "surrogateescape"),
            )
        else:
            gitcmd.run(
                [*base, "checkout-index", "-a", "-f", f"--prefix={prefix}"],
                env=git_env,
                timeout=timeout,
                what=what,
                cwd=tmp,  # the prefix is relative to where git runs: the new tree
            )
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        try:
            os.unlink(index)
        except FileNotFoundError:
            pass
    try:
        os.rename(tmp, dest)
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise
        shutil.rmtree(tmp, ignore_errors=True)  # another process exported it first
    return key


def _changes(repo: str, env: dict[str, str], old: str, new: str, timeout: float, what: str) -> list[tuple[str, str]]:
    """(path, status letter) of what differs between two trees (A, D, M, T)."""
    out = gitcmd.run(
        ["--git-dir", repo, "diff-tree", "-r", "-z", "--no-renames", old, new], env=env, timeout=timeout, what=what
    )
    fields = out.split(b"\0")
    # records: ":<modes and shas> <status>" then the path
    return [
        (fields[i + 1].decode("utf-8", "surrogateescape"), fields[i].decode()[-1:])
        for i in range(0, len(fields) - 1, 2)
        if fields[i].startswith(b":")
    ]


def _link_tree(src: str, dst: str) -> None:
    """``src``'s folders made again under ``dst``, its files hard-linked, its symlinks copied."""
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        target = dst if rel == "." else os.path.join(dst, rel)
        for name in dirnames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                os.symlink(os.readlink(full), os.path.join(target, name))
            else:
                os.mkdir(os.path.join(target, name), 0o755)
        for name in filenames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                os.symlink(os.readlink(full), os.path.join(target, name))
            else:
                os.link(full, os.path.join(target, name))


def _remove(top: str, rel: str) -> None:
    """Remove ``top/rel`` (a file or link; never followed) and the folders it leaves empty."""
    full = os.path.join(top, rel)
    try:
        os.unlink(full)
    except FileNotFoundError:
        return
    except IsADirectoryError:
        shutil.rmtree(full)
    parent = os.path.dirname(full)
    while parent != top and parent.startswith(top + os.sep):
        try:
            os.rmdir(parent)
        except OSError:
            break
        parent = os.path.dirname(parent)
