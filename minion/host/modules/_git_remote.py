"""Remotes for the ``git`` execution module (a private sibling of ``git.py``, which imports it;
its public functions are the module's): listing a remote's refs, the checkout's remotes,
fetch, pull, push and submodules."""

from __future__ import annotations

import logging
import re
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.common.urlauth import redact_http_basic_auth

from ._git_cmd import _auth_url, _clean, _expand_path, _git, _git_run, _invalid, _opts, _simple, _stdout

log = logging.getLogger(__name__)

_FETCH_LINE = re.compile(r"[\s*+!-]*(?:([0-9a-f]+)\.\.\.?([0-9a-f]+)|\[(?:new (tag|branch)|tag update)\])\s+(.+)->")


def _parse_refs(output: str) -> dict[str, str]:
    ret: dict[str, str] = {}
    for line in output.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            ret[parts[1]] = parts[0]
    return ret


def ls_remote(
    cwd: Any = None,
    remote: str = "origin",
    ref: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    https_user: Any = None,
    https_pass: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    saltenv: str = "base",
) -> dict[str, str]:
    """``git ls-remote``: ``{ref name: sha1}`` of a remote (a name in ``cwd``'s config, or a URL)."""
    if cwd is not None:
        cwd = _expand_path(cwd, user)
    command = _git(git_opts) + ["ls-remote", *_opts(opts), _auth_url(str(remote), https_user, https_pass)]
    command += [str(ref)] if ref else []
    out = _stdout(
        command,
        cwd,
        user,
        identity=identity,
        ignore_retcode=ignore_retcode,
        saltenv=saltenv,
        output_encoding=output_encoding,
    )
    return _parse_refs(out)


def remote_refs(
    url: str,
    heads: bool = False,
    tags: bool = False,
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    https_user: Any = None,
    https_pass: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    saltenv: str = "base",
    **kwargs: Any,
) -> dict[str, str]:
    """Every ref of the remote at ``url`` (``heads`` / ``tags`` only those; ``filter`` a pattern)."""
    kwargs = _clean(kwargs)
    filter_ = kwargs.pop("filter", None)
    _invalid(kwargs)
    command = ["git", "ls-remote"] + (["--heads"] if heads else []) + (["--tags"] if tags else [])
    command.append(_auth_url(str(url), https_user, https_pass))
    command += [str(filter_)] if filter_ else []
    out = _stdout(
        command,
        None,
        user,
        identity=identity,
        ignore_retcode=ignore_retcode,
        saltenv=saltenv,
        output_encoding=output_encoding,
    )
    return _parse_refs(out)


def remotes(
    cwd: str,
    user: Any = None,
    password: Any = None,
    redact_auth: bool = True,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> dict[str, dict[str, str]]:
    """``{remote: {"fetch": url, "push": url}}`` (credentials redacted unless ``redact_auth=False``)."""
    out = _simple(cwd, user, ["git", "remote", "--verbose"], ignore_retcode, output_encoding)
    ret: dict[str, dict[str, str]] = {}
    for line in out.splitlines():
        parts = line.split(None, 1)
        if len(parts) != 2 or len(parts[1].rsplit(None, 1)) != 2:
            continue
        url, action = parts[1].rsplit(None, 1)
        action = action.strip("()").lower()
        if action not in ("fetch", "push"):
            log.warning("Unknown action '%s' for remote '%s' in git checkout located in %s", action, parts[0], cwd)
            continue
        ret.setdefault(parts[0], {})[action] = redact_http_basic_auth(url) if redact_auth else url
    return ret


def remote_get(
    cwd: str,
    remote: str = "origin",
    user: Any = None,
    password: Any = None,
    redact_auth: bool = True,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> dict[str, str]:
    """The fetch and push URLs of ``remote``."""
    cwd = _expand_path(cwd, user)
    found = remotes(
        cwd, user=user, redact_auth=redact_auth, ignore_retcode=ignore_retcode, output_encoding=output_encoding
    )
    if remote not in found:
        raise CommandExecutionError(f"Remote '{remote}' not present in git checkout located at {cwd}")
    return found[remote]


def remote_set(
    cwd: str,
    url: str,
    remote: str = "origin",
    user: Any = None,
    password: Any = None,
    https_user: Any = None,
    https_pass: Any = None,
    push_url: Any = None,
    push_https_user: Any = None,
    push_https_pass: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> dict[str, str]:
    """Set ``remote`` to ``url`` (removed and added again if it exists), ``push_url`` too; returns remote_get."""
    cwd = _expand_path(cwd, user)
    run = {"ignore_retcode": ignore_retcode, "output_encoding": output_encoding}
    if remote in remotes(cwd, user=user, output_encoding=output_encoding):
        log.debug(
            "Remote '%s' already exists in git checkout located at %s, removing so it can be re-added", remote, cwd
        )
        _git_run(["git", "remote", "rm", remote], cwd=cwd, user=user, **run)
    _git_run(["git", "remote", "add", remote, _auth_url(str(url), https_user, https_pass)], cwd=cwd, user=user, **run)
    if push_url:
        push = _auth_url(str(push_url), push_https_user, push_https_pass)
        _git_run(["git", "remote", "set-url", "--push", remote, push], cwd=cwd, user=user, **run)
    return remote_get(cwd, remote=remote, user=user, ignore_retcode=ignore_retcode, output_encoding=output_encoding)


def fetch(
    cwd: str,
    remote: Any = None,
    force: bool = False,
    refspecs: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    ignore_retcode: bool = False,
    saltenv: str = "base",
    output_encoding: Any = None,
) -> dict[str, Any]:
    """``git fetch``; what changed: ``new branches``, ``new tags``, ``updated branches`` ({ref: {old, new}}), ``updated tags``."""
    command = _git(git_opts) + ["fetch"] + (["--force"] if force else [])
    command += [x for x in _opts(opts) if x not in ("-f", "--force")]
    command += [str(remote)] if remote else []
    if refspecs is not None:
        command += [str(r) for r in (refspecs if isinstance(refspecs, (list, tuple)) else str(refspecs).split(","))]
    out = _simple(
        cwd, user, command, ignore_retcode, output_encoding, identity=identity, redirect_stderr=True, saltenv=saltenv
    )
    ret: dict[str, Any] = {}
    for line in out.split("\n"):
        match = _FETCH_LINE.match(line)
        if not match:
            continue
        old, new, kind, ref = match.groups()
        ref = ref.rstrip()
        if kind is not None:
            ret.setdefault("new tags" if kind == "tag" else "new branches", []).append(ref)
        elif old is not None:
            ret.setdefault("updated branches", {})[ref] = {"old": old, "new": new}
        else:
            ret.setdefault("updated tags", []).append(ref)
    return ret


def pull(
    cwd: str,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    ignore_retcode: bool = False,
    saltenv: str = "base",
    output_encoding: Any = None,
) -> str:
    """``git pull [opts]``."""
    return _simple(
        cwd,
        user,
        _git(git_opts) + ["pull", *_opts(opts)],
        ignore_retcode,
        output_encoding,
        identity=identity,
        saltenv=saltenv,
    )


def push(
    cwd: str,
    remote: Any = None,
    ref: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    ignore_retcode: bool = False,
    saltenv: str = "base",
    output_encoding: Any = None,
    **kwargs: Any,
) -> str:
    """``git push [opts] [remote] [ref]``."""
    _invalid(_clean(kwargs))
    command = _git(git_opts) + ["push", *_opts(opts)] + [str(x) for x in (remote, ref) if x]
    return _simple(cwd, user, command, ignore_retcode, output_encoding, identity=identity, saltenv=saltenv)


def submodule(
    cwd: str,
    command: str,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    ignore_retcode: bool = False,
    saltenv: str = "base",
    output_encoding: Any = None,
    **kwargs: Any,
) -> str:
    """``git submodule COMMAND [opts]`` (``update`` with ``opts="--init --recursive"``, ``sync``, ...)."""
    kwargs = _clean(kwargs)
    if kwargs.pop("init", False):
        raise SaltInvocationError(
            "The 'init' argument is no longer supported. Either set 'command' to 'init', or include '--init' in "
            "the 'opts' argument and set 'command' to 'update'."
        )
    _invalid(kwargs)
    full = _git(git_opts) + ["submodule", str(command), *_opts(opts)]
    return _simple(cwd, user, full, ignore_retcode, output_encoding, identity=identity, saltenv=saltenv)
