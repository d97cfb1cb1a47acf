"""Execution module ``git``: the git command line, as Salt 3007's ``git`` module drives it.

Every call runs ``git`` through ``__salt__["cmd.run_all"]`` (no shell,
``runas`` = ``user``, locale C, ``GIT_TERMINAL_PROMPT=0`` so a remote that
asks for a password fails instead of waiting on a terminal). Arguments,
return values and errors are Salt's:

- a failing command raises :class:`CommandExecutionError` worded
  ``Command 'git ...' failed: <git's stderr>`` (the states strip the
  ``Command ... failed:`` prefix from their comments); HTTP basic-auth
  credentials are redacted from commands and messages
  (``https://<redacted>@host/...``);
- ``user`` runs git as that user (``User 'x' is not available`` when there
  is no such user); a relative ``cwd`` is taken from that user's home;
- ``global=True`` reads or writes the user's ``~/.gitconfig``
  (``git config --global``), otherwise the repository's config
  (``git config --local``, which needs ``cwd``);
- ``https_user`` / ``https_pass`` are put into an ``https://`` URL (any other
  scheme: ``Basic Auth only supported for HTTPS``);
- ``identity``: one SSH private key or a list, tried in order (a ``salt://``
  key is fetched into a private temporary file first, owned by ``user``);
  git runs ssh with ``-i KEY`` and Salt's options (no host key check, no
  password or keyboard-interactive prompts, ``BatchMode``). Salt refuses
  passphrase-protected keys outside ``salt-call``; briny never prompts, so
  such a key simply fails to authenticate, with ssh's message.
- ``password`` is Windows-only in Salt and accepted and ignored here.

The module's parts live in private files beside it, which it imports (their
public functions are this module's): running git in ``_git_cmd.py``,
revisions, branches and tags in ``_git_refs.py``, remotes in
``_git_remote.py`` and config in ``_git_config.py``; here are the
repository and its working tree.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

from ._git_cmd import _auth_url, _clean, _expand_path, _git, _git_run, _invalid, _opts, _simple, _stdout
from ._git_config import config_get, config_get_regex, config_get_regexp, config_set, config_unset
from ._git_refs import (
    current_branch,
    describe,
    list_branches,
    list_tags,
    merge_base,
    rev_parse,
    revision,
    symbolic_ref,
    tag,
)
from ._git_remote import fetch, ls_remote, pull, push, remote_get, remote_refs, remote_set, remotes, submodule

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __salt__

log = logging.getLogger(__name__)

__func_alias__ = {"rm_": "rm"}

# the execution functions: those defined here and those of the private files imported above
__all__ = [
    "add",
    "branch",
    "checkout",
    "clone",
    "commit",
    "config_get",
    "config_get_regex",
    "config_get_regexp",
    "config_set",
    "config_unset",
    "current_branch",
    "describe",
    "diff",
    "discard_local_changes",
    "fetch",
    "init",
    "is_worktree",
    "list_branches",
    "list_tags",
    "ls_remote",
    "merge",
    "merge_base",
    "pull",
    "push",
    "remote_get",
    "remote_refs",
    "remote_set",
    "remotes",
    "reset",
    "rev_parse",
    "revision",
    "rm_",
    "status",
    "submodule",
    "symbolic_ref",
    "tag",
    "version",
]


def __virtual__() -> Any:
    if __salt__["cmd.which"]("git") is None:
        return False, "The git execution module cannot be loaded: git unavailable."
    return True


# ---------------------------------------------------------------- version and repositories


def version(versioninfo: bool = False, **kwargs: Any) -> Any:
    """The git version (``2.39.5``), or a list of its parts with ``versioninfo=True``."""
    ctx = __context__
    if "git.version" not in ctx:
        try:
            out = str(_git_run(["git", "--version"])["stdout"])
        except CommandExecutionError as exc:
            log.error("Failed to obtain the git version (error follows):\n%s", exc)
            out = "unknown"
        out = out.split("(")[0].strip().split(".windows")[0].strip()
        ctx["git.version"] = out.split()[-1] if out.split() else "unknown"
    if not versioninfo:
        return ctx["git.version"]
    return [int(p) if p.isdigit() else p for p in ctx["git.version"].split(".")]


def init(
    cwd: str,
    bare: bool = False,
    template: Any = None,
    separate_git_dir: Any = None,
    shared: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git init`` (``bare``, ``template``, ``separate_git_dir``, ``shared``) of ``cwd``."""
    cwd = _expand_path(cwd, user)
    command = _git(git_opts) + ["init"]
    if bare:
        command.append("--bare")
    if template is not None:
        command.append(f"--template={template}")
    if separate_git_dir is not None:
        command.append(f"--separate-git-dir={separate_git_dir}")
    if shared is not None:
        if isinstance(shared, int) and not isinstance(shared, bool):
            shared = "0" + str(shared)
        elif not isinstance(shared, str):
            shared = str(shared).lower()
        command.append(f"--shared={shared}")
    command += _opts(opts) + [cwd]
    return _stdout(command, None, user, ignore_retcode=ignore_retcode, output_encoding=output_encoding)


def clone(
    cwd: str,
    url: Any = None,
    name: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    https_user: Any = None,
    https_pass: Any = None,
    ignore_retcode: bool = False,
    saltenv: str = "base",
    output_encoding: Any = None,
) -> bool:
    """``git clone URL CWD`` (or into ``cwd/name``); True."""
    cwd = _expand_path(cwd, user)
    if not url:
        raise SaltInvocationError("Missing 'url' argument")
    command = _git(git_opts) + ["clone", *_opts(opts), "--", _auth_url(str(url), https_user, https_pass)]
    if name is not None:
        command.append(str(name))
        os.makedirs(cwd, exist_ok=True)
        run_cwd = cwd
    else:
        command.append(cwd)
        run_cwd = "/tmp"  # noqa: S108 - only where git runs: the clone goes to the absolute cwd
    _git_run(
        command,
        cwd=run_cwd,
        user=user,
        identity=identity,
        ignore_retcode=ignore_retcode,
        saltenv=saltenv,
        output_encoding=output_encoding,
    )
    return True


def is_worktree(cwd: str, user: Any = None, password: Any = None, output_encoding: Any = None) -> bool:
    """True when ``cwd`` is in a linked worktree (its ``.git`` is a file pointing at an absolute gitdir)."""
    cwd = _expand_path(cwd, user)
    try:
        top = _stdout(["git", "rev-parse", "--show-toplevel"], cwd, user, ignore_retcode=True)
    except CommandExecutionError:
        return False
    try:
        with open(os.path.join(top, ".git"), encoding="utf-8") as fh:
            first = fh.readline().split(None, 1)
    except OSError:
        return False
    return len(first) == 2 and first[0] == "gitdir:" and os.path.isabs(first[1].strip())


def status(
    cwd: str, user: Any = None, password: Any = None, ignore_retcode: bool = False, output_encoding: Any = None
) -> dict[str, list[str]]:
    """Changed files by kind: ``modified``, ``new``, ``deleted``, ``untracked`` (other codes as git prints them)."""
    cwd = _expand_path(cwd, user)
    names = {"M": "modified", "A": "new", "D": "deleted", "??": "untracked"}
    out = _stdout(
        ["git", "status", "-z", "--porcelain"],
        cwd,
        user,
        ignore_retcode=ignore_retcode,
        output_encoding=output_encoding,
    )
    ret: dict[str, list[str]] = {}
    for entry in out.split("\0"):
        parts = entry.split(None, 1)
        if len(parts) == 2:
            ret.setdefault(names.get(parts[0], parts[0]), []).append(parts[1])
    return ret


# ---------------------------------------------------------------- the working tree


def branch(
    cwd: str,
    name: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> bool:
    """``git branch [opts] [name]``; True."""
    command = _git(git_opts) + ["branch", *_opts(opts)] + ([str(name)] if name is not None else [])
    _simple(cwd, user, command, ignore_retcode, output_encoding)
    return True


def checkout(
    cwd: str,
    rev: Any = None,
    force: bool = False,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git checkout [--force] [opts] rev`` (``rev`` may be left out with ``-b``/``-B`` in opts)."""
    options = _opts(opts)
    if rev is None and not any(x in options for x in ("-b", "-B")):
        raise SaltInvocationError("'rev' argument is required unless -b or -B in opts")
    command = _git(git_opts) + ["checkout", *(["--force"] if force else []), *options]
    command += [str(rev)] if rev is not None else []
    return _simple(cwd, user, command, ignore_retcode, output_encoding, redirect_stderr=True)


def reset(
    cwd: str,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git reset [opts]``."""
    return _simple(
        cwd, user, _git(git_opts) + ["reset", *_opts(opts)], ignore_retcode, output_encoding, identity=identity
    )


def merge(
    cwd: str,
    rev: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> str:
    """``git merge [opts] [rev]``."""
    _invalid(_clean(kwargs))
    command = _git(git_opts) + ["merge", *_opts(opts)] + ([str(rev)] if rev else [])
    return _simple(cwd, user, command, ignore_retcode, output_encoding, identity=identity)


def diff(
    cwd: str,
    item1: Any = None,
    item2: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    no_index: bool = False,
    cached: bool = False,
    paths: Any = None,
    output_encoding: Any = None,
) -> str:
    """``git diff`` between two revisions, against the index (``cached``) or of two paths (``no_index``)."""
    if no_index and cached:
        raise CommandExecutionError("The 'no_index' and 'cached' options cannot be used together")
    command = _git(git_opts) + ["diff", *_opts(opts)]
    if paths is not None and not isinstance(paths, (list, tuple)):
        paths = str(paths).split(",")
    failhard = True
    if no_index:
        failhard = False
        command.append("--no-index")
        for value in (x for x in (item1, item2) if x):
            log.warning("Revision '%s' ignored in git diff, as revisions cannot be used when no_index=True", value)
    elif cached:
        command += ["--cached"] + ([str(item1)] if item1 else [])
        if item2:
            log.warning(
                "Second revision '%s' ignored in git diff, at most one revision is considered when cached=True", item2
            )
    else:
        command += [str(x) for x in (item1, item2) if x]
    if paths:
        command += ["--", *[str(p) for p in paths]]
    return str(
        _git_run(
            command,
            cwd=cwd,
            user=user,
            ignore_retcode=no_index,
            failhard=failhard,
            redirect_stderr=True,
            output_encoding=output_encoding,
        )["stdout"]
    )


def discard_local_changes(
    cwd: str,
    path: str = ".",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git checkout -- PATH``: drop unstaged changes."""
    return _simple(
        cwd, user, ["git", "checkout", "--", str(path)], ignore_retcode, output_encoding, redirect_stderr=True
    )


def add(
    cwd: str,
    filename: str,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git add [opts] -- FILENAME``."""
    return _simple(
        cwd, user, _git(git_opts) + ["add", *_opts(opts), "--", str(filename)], ignore_retcode, output_encoding
    )


def commit(
    cwd: str,
    message: str,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    filename: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git commit -m MESSAGE [opts] [-- FILENAME]``."""
    command = (
        _git(git_opts) + ["commit", "-m", str(message), *_opts(opts)] + (["--", str(filename)] if filename else [])
    )
    return _simple(cwd, user, command, ignore_retcode, output_encoding)


def rm_(
    cwd: str,
    filename: str,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git rm [opts] -- FILENAME``."""
    return _simple(
        cwd, user, _git(git_opts) + ["rm", *_opts(opts), "--", str(filename)], ignore_retcode, output_encoding
    )
