r"""The ``git`` state module: clones kept up to date, repositories, git config.

Everything goes through the ``git`` execution module. Results follow Salt
3007 (comments, changes, result values and argument names, checked against
the reference on local bare repositories, live, in test mode and on second
runs):

- ``git.latest``: clone ``name`` into ``target`` and keep it at ``rev`` (a
  branch, a tag, a SHA1, or the remote's ``HEAD``), with ``branch`` (the
  local branch to use), ``force_clone`` (empty a non-repository ``target``
  first), ``force_reset`` (True, False or ``remote-changes``: hard-reset
  when the update is not a fast-forward or the checkout has uncommitted
  changes), ``force_checkout``, ``force_fetch``, ``update_head``, ``depth``
  (``rev`` must then be a branch or tag), ``submodules``, ``bare``,
  ``mirror``, ``remote``, ``fetch_tags``, ``sync_tags``, ``refspec_branch``,
  ``refspec_tag``, ``user``, ``identity`` (SSH keys, local paths or
  ``salt://``; see the execution module) and ``https_user`` /
  ``https_pass`` (HTTPS only; redacted from comments). A remote that
  cannot be reached fails that state only: ``Failed to check remote refs:
  <git's message>``.
- ``git.present``: an (empty, by default bare) repository at ``name``.
- ``git.cloned``: a clone at ``target``, optionally on ``branch``; never
  updated.
- ``git.detached``: ``target`` (cloned with ``--no-checkout`` when it is
  not a checkout yet; ``force_clone`` empties a non-repository first) checked
  out at the commit ``rev`` names (a branch of ``remote``, a tag or a SHA1),
  with a detached HEAD. The checkout's ``remote`` is set to ``name`` when it
  fetches from elsewhere; it is fetched (branches and tags, forced) unless
  ``fetch_remote: False`` or ``rev`` is a SHA1 it has already;
  ``hard_reset`` resets to HEAD first (every run, as Salt; not a change),
  ``force_checkout`` discards uncommitted changes, ``submodules`` updates
  them; ``user``, ``identity``, ``https_user`` / ``https_pass`` as for
  ``latest``. As Salt, test mode on an existing checkout says ``Repository
  remote origin would be fetched`` (result None) whenever that fetch is
  due, and a clone it would make has no ``changes``.
- ``git.config_set`` / ``git.config_unset``: a key of a repository's
  config (``repo``) or of ``user``'s ``~/.gitconfig`` (``global: True``);
  ``multivar`` for several values; ``config_unset`` takes a regex ``name``
  (anchored, as Salt does), ``value_regex`` and ``all``.

``password`` (Windows only in Salt) and ``output_encoding`` are accepted and
passed on. An unknown argument fails the state with Salt's ``The following
keyword arguments are not valid: ...``.

Deliberate differences from Salt 3007, where Salt's result is a traceback
or contradicts its own documentation:

- when ``user`` does not exist (say a user that a state of the same run
  creates, seen in test mode), Salt's ``git.config_set`` / ``config_unset``
  raise and their comment is a traceback; here the state fails with the
  same message, ``User 'x' is not available``, without the traceback;
- ``git.config_unset`` whose ``name`` is a regex (``color\..+``): Salt
  documents it, but passes the regex to ``git config --unset`` as a key
  name, which git refuses (``Error(s) occurred unsetting values for the
  following keys ...``); here each matching key is unset by its own name;
- ``git.config_unset`` that removes a key's last value: Salt unsets it, then
  fails with a ``KeyError`` traceback; here the state succeeds and reports
  the removed values (``changes: {key: [values]}``);
- ``git.detached`` with an annotated tag: Salt takes the tag object's SHA1
  for the commit ID (its comment names it, and every run checks the tag out
  again and reports a change); here the tag's commit is checked out and
  named, and a second run changes nothing (Salt documents that a tag "will
  be resolved to a commit ID");
- ``git.detached`` with a short SHA1: Salt compares it with HEAD as a
  string, so it never matches (a change on every run, in test mode too);
  here it matches the commit it abbreviates;
- ``git.detached`` with a SHA1 that names no commit after the fetch: Salt's
  comment is a traceback; here the state fails with ``Revision '...' does
  not exist``, as Salt words it for a branch or tag; a failed checkout or
  submodule update also fails the state with git's message;
- ``git.detached`` with ``https_user`` / ``https_pass`` and a branch or tag:
  Salt hands the credentials to ``git.remote_refs`` of the local checkout,
  which refuses them for a path (a traceback); here the checkout's refs are
  read without them. Salt's comment for an empty ``target`` names ``rev``'s
  value; here it names ``target``'s.

The module's parts are private files beside it, which it imports (their
state functions are this module's): ``latest`` in ``_git_latest.py`` and
``_git_update.py``, ``detached`` in ``_git_detached.py``, the config states
in ``_git_config.py``, and what they share in ``_git_common.py``.
"""

from __future__ import annotations

import logging
import os
import shutil
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

from ._access import _salt, _testing
from ._git_common import (
    _clean,
    _fail,
    _format_comments,
    _invalid,
    _neutral_test,
    _ret,
    _rev_parse,
    _strip_exc,
)
from ._git_config import config_set, config_unset
from ._git_detached import detached
from ._git_latest import latest

log = logging.getLogger(__name__)

# the state functions: those defined here and those of the private files imported above
__all__ = ["cloned", "config_set", "config_unset", "detached", "latest", "present"]


def present(
    name: str,
    force: bool = False,
    bare: bool = True,
    template: Any = None,
    separate_git_dir: Any = None,
    shared: Any = None,
    user: Any = None,
    password: Any = None,
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """An initialized repository at ``name`` (bare unless ``bare: False``); ``force`` empties a non-repository."""
    ret = _ret(name)
    kwargs = _clean(kwargs)
    if kwargs:
        return _fail(ret, _invalid(kwargs))
    kind = "bare " if bare else ""
    if os.path.isdir(name):
        if bare and os.path.isfile(os.path.join(name, "HEAD")):
            return ret
        if not bare and (
            os.path.isdir(os.path.join(name, ".git"))
            or _salt("git.is_worktree")(name, user=user, password=password, output_encoding=output_encoding)
        ):
            return ret
        if force:
            if _testing():
                ret["changes"].update({"new": name, "forced init": True})
                return _neutral_test(
                    ret,
                    f"Target directory {name} exists. Since force=True, the contents of {name} would be deleted, "
                    f"and a {kind}repository would be initialized in its place.",
                )
            try:
                if os.path.islink(name):
                    os.unlink(name)
                else:
                    shutil.rmtree(name)
            except OSError as exc:
                return _fail(ret, f"Unable to remove {name}: {exc}")
            ret["changes"]["forced init"] = True
        elif os.listdir(name):
            return _fail(
                ret,
                f"Target '{name}' exists, is non-empty, and is not a git repository. Set the 'force' option to True "
                "to remove this directory's contents and proceed with initializing a repository",
            )
    if _testing():
        ret["changes"]["new"] = name
        return _neutral_test(ret, f"New {kind}repository would be created")
    _salt("git.init")(
        cwd=name,
        bare=bare,
        template=template,
        separate_git_dir=separate_git_dir,
        shared=shared,
        user=user,
        password=password,
        output_encoding=output_encoding,
    )
    actions = [f"Initialized {kind}repository in {name}"]
    if template:
        actions.append(f"Template directory set to {template}")
    if separate_git_dir:
        actions.append(f"Gitdir set to {separate_git_dir}")
    ret["changes"]["new"] = name
    ret["comment"] = _format_comments(actions)
    return ret


def _already_cloned(ret: dict[str, Any], target: str, branch: str | None) -> dict[str, Any]:
    ret["result"] = True
    on = f" and is checked out to branch '{branch}'" if branch else ""
    ret["comment"] = f"Repository already exists at {target}{on}"
    return ret


def cloned(
    name: str,
    target: Any = None,
    branch: Any = None,
    user: Any = None,
    password: Any = None,
    identity: Any = None,
    https_user: Any = None,
    https_pass: Any = None,
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """A clone of ``name`` at ``target`` (on ``branch``); an existing clone is left as it is, but for its branch."""
    ret = _ret(name, False)
    kwargs = _clean(kwargs)
    if kwargs:
        return _fail(ret, _invalid(kwargs))
    if target is None:
        ret["comment"] = "'target' argument is required"
        return ret
    target = str(target)
    if not os.path.isabs(target):
        ret["comment"] = "'target' path must be absolute"
        return ret
    if branch is not None:
        branch = str(branch)
        if not branch:
            ret["comment"] = "Invalid 'branch' argument"
            return ret
    kw = {"user": user, "password": password, "output_encoding": output_encoding}
    if os.path.exists(target):
        try:
            _salt("git.status")(target, **kw)
        except (CommandExecutionError, SaltInvocationError) as exc:
            ret["comment"] = str(exc)
            return ret
        if branch is None:
            return _already_cloned(ret, target, branch)
        current = _salt("git.current_branch")(target, **kw)
        if current == branch:
            return _already_cloned(ret, target, branch)
        if _testing():
            ret["changes"]["branch"] = {"old": current, "new": branch}
            return _neutral_test(ret, f"Branch would be changed to '{branch}'")
        if _rev_parse(target, branch, **kw) is None:
            checkout_rev, opts = f"origin/{branch}", ["-b", branch]
        else:
            checkout_rev, opts = branch, None
        try:
            _salt("git.checkout")(target, rev=checkout_rev, opts=opts, **kw)
        except CommandExecutionError as exc:
            return _fail(ret, f"Failed to change branch to '{branch}': {exc}")
        ret["changes"]["branch"] = {"old": current, "new": branch}
        ret["comment"] = f"Branch changed to '{branch}'"
        ret["result"] = True
        return ret
    with_branch = f" with branch '{branch}'" if branch is not None else ""
    if _testing():
        ret["changes"]["new"] = f"{name} => {target}"
        return _neutral_test(ret, f"{name} would be cloned to {target}{with_branch}")
    try:
        _salt("git.clone")(
            target,
            name,
            opts=["--branch", branch] if branch is not None else None,
            identity=identity,
            https_user=https_user,
            https_pass=https_pass,
            **kw,
        )
    except (CommandExecutionError, SaltInvocationError) as exc:
        return _fail(ret, f"Clone failed: {_strip_exc(exc)}")
    ret["changes"]["new"] = f"{name} => {target}"
    ret["comment"] = f"{name} cloned to {target}{with_branch}"
    ret["result"] = True
    return ret
