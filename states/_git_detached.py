"""``git.detached`` (a private sibling of ``git.py``, which imports it; its state function is the
module's): a checkout of one commit with a detached HEAD. See ``git.py``'s docstring."""

from __future__ import annotations

import logging
import os
import string
from typing import Any

from briny.common.exceptions import CommandExecutionError
from briny.common.urlauth import add_http_basic_auth

from ._access import _env, _salt, _testing
from ._git_common import (
    _clean,
    _clone,
    _fail,
    _format_comments,
    _identities,
    _invalid,
    _local_rev_and_branch,
    _make_room,
    _neutral_test,
    _ret,
    _strip_exc,
)

log = logging.getLogger(__name__)


def _is_sha(rev: str) -> bool:
    return len(rev) <= 40 and all(c in string.hexdigits for c in rev)


def _same_commit(wanted: str, local: str | None, is_sha: bool) -> bool:
    """A SHA1 given short matches the commit it abbreviates (Salt compares the strings)."""
    if local is None:
        return False
    return local.startswith(wanted) if is_sha else local == wanted


def detached(
    name: str,
    rev: Any,
    target: Any,
    remote: Any = "origin",
    user: Any = None,
    password: Any = None,
    force_clone: bool = False,
    force_checkout: bool = False,
    fetch_remote: bool = True,
    hard_reset: bool = False,
    submodules: bool = False,
    identity: Any = None,
    https_user: Any = None,
    https_pass: Any = None,
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """``target``, a clone of ``name``, checked out at the commit ``rev`` (a branch, a tag or a
    SHA1) names, with a detached HEAD (see the module docstring)."""
    ret = _ret(name)
    kwargs = _clean(kwargs)
    if kwargs:
        return _fail(ret, _invalid(kwargs))
    if not rev:
        return _fail(ret, f"'{rev}' is not a valid value for the 'rev' argument")
    if not target:
        return _fail(ret, f"'{target}' is not a valid value for the 'target' argument")
    rev, target = str(rev), str(target)
    if not os.path.isabs(target):
        return _fail(ret, f"Target '{target}' is not an absolute path")
    user, remote, https_user, https_pass = (
        None if v is None else str(v) for v in (user, remote, https_user, https_pass)
    )
    if identity is not None:
        identity = _identities(identity, "Identity")
        if isinstance(identity, str):
            return _fail(ret, identity)
    if os.path.isfile(target):
        return _fail(ret, f"Target '{target}' exists and is a regular file, cannot proceed")
    try:
        add_http_basic_auth(name, https_user, https_pass, https_only=True)
    except ValueError as exc:
        return _fail(ret, str(exc))
    plan = _Detached(
        ret,
        name,
        rev,
        target,
        {
            "remote": remote,
            "identity": identity,
            "https_user": https_user,
            "https_pass": https_pass,
            "kw": {"user": user, "password": password, "output_encoding": output_encoding},
        },
    )
    try:
        return plan.run(force_clone, force_checkout, fetch_remote, hard_reset, submodules)
    except CommandExecutionError as exc:  # a git command that failed past the checks: this state fails
        log.error("git.detached %s: %s", target, exc)
        return _fail(ret, _strip_exc(exc), plan.comments)


class _Detached:
    """One ``git.detached``: the clone (or the checkout's remote), the fetch, the commit ``rev``
    names, and its checkout."""

    def __init__(self, ret: dict[str, Any], name: str, rev: str, target: str, args: dict[str, Any]) -> None:
        self.ret, self.name, self.target = ret, name, target
        self.is_sha = _is_sha(rev)
        self.rev = rev.lower() if self.is_sha else rev
        self.remote: str = args["remote"]
        self.identity: Any = args["identity"]
        self.https_user: str | None = args["https_user"]
        self.https_pass: str | None = args["https_pass"]
        self.kw: dict[str, Any] = args["kw"]
        self.comments: list[str] = []

    def run(
        self, force_clone: bool, force_checkout: bool, fetch_remote: bool, hard_reset: bool, submodules: bool
    ) -> dict[str, Any]:
        ret, target, kw = self.ret, self.target, self.kw
        local_commit: str | None = None
        sha_is_local = False
        if os.path.isdir(os.path.join(target, ".git")) or _salt("git.is_worktree")(target, **kw):
            local_commit = _local_rev_and_branch(target, kw)[0]
            if self.is_sha:
                sha_is_local = self._describe(ignore_retcode=True) is not None
            else:
                done = self._check_remote()
                if done is not None:
                    return done
        else:
            done = self._clone(force_clone)
            if done is not None:
                return done
        if fetch_remote and not sha_is_local:
            if _testing():
                return _neutral_test(ret, f"Repository remote {self.remote} would be fetched")
            done = self._fetch()
            if done is not None:
                return done
        commit = self._commit()
        if isinstance(commit, dict):
            return commit
        if hard_reset:
            if _testing():
                return _neutral_test(ret, f"Hard reset to HEAD would be performed on {target}")
            _salt("git.reset")(target, opts=["--hard", "HEAD"], **kw)
            self.comments.append("Repository was reset to HEAD before checking out revision")
        new_commit = None
        if not _same_commit(commit, local_commit, self.is_sha):
            if _testing():
                ret["changes"]["HEAD"] = {"old": local_commit, "new": commit}
                return _neutral_test(ret, f"Commit ID {commit} would be checked out at {target}")
            _salt("git.checkout")(target, commit, force=force_checkout, **kw)
            self.comments.append(f"Commit ID {commit} was checked out at {target}")
            new_commit = _local_rev_and_branch(target, kw)[0]  # as Salt: None when git cannot tell
        if submodules:
            try:
                _salt("git.submodule")(
                    target, "update", opts=["--init", "--recursive"], identity=self.identity, saltenv=_env(), **kw
                )
            except CommandExecutionError as exc:
                return _fail(ret, "Failed to update submodules: " + _strip_exc(exc), self.comments)
            self.comments.append("Submodules were updated")
        if new_commit is not None:
            ret["changes"]["HEAD"] = {"old": local_commit, "new": new_commit}
        else:
            self.comments.append("Already checked out at correct revision")
        ret["comment"] = _format_comments(self.comments)
        return ret

    def _describe(self, ignore_retcode: bool) -> str | None:
        try:
            return str(_salt("git.describe")(self.target, self.rev, ignore_retcode=ignore_retcode, **self.kw))
        except CommandExecutionError:
            return None

    def _check_remote(self) -> dict[str, Any] | None:
        """The checkout's ``remote`` fetches from ``name`` (set it when not; None: go on)."""
        remotes = _salt("git.remotes")(self.target, redact_auth=False, **self.kw)
        current = remotes.get(self.remote, {}).get("fetch")
        if current is not None and self.name in current:
            return None
        if _testing():
            return _neutral_test(self.ret, f"Remote {self.remote} would be set to {self.name}")
        _salt("git.remote_set")(
            self.target,
            url=self.name,
            remote=self.remote,
            https_user=self.https_user,
            https_pass=self.https_pass,
            **self.kw,
        )
        self.comments.append(f"Remote {self.remote} updated from '{current}' to '{self.name}'")
        return None

    def _clone(self, force_clone: bool) -> dict[str, Any] | None:
        """Clone into ``target`` (None: go on), emptying it first with ``force_clone``."""
        ret, name, target = self.ret, self.name, self.target
        done = _make_room(ret, name, target, force_clone, self.comments, {})
        if done is not None:
            return done
        if _testing():
            return _neutral_test(ret, f"Repository {name} would be cloned to {target}")
        opts = ["--no-checkout"] + (["--origin", self.remote] if self.remote != "origin" else [])
        auth = {"identity": self.identity, "https_user": self.https_user, "https_pass": self.https_pass}
        failed = _clone(target, name, opts, auth, self.kw)
        if failed is not None:
            log.error("git.detached: cloning %s failed: %s", name, failed)
            return _fail(ret, failed, self.comments)
        self.comments.append(f"{name} cloned to {target}")
        return None

    def _fetch(self) -> dict[str, Any] | None:
        refspecs = [f"refs/heads/*:refs/remotes/{self.remote}/*", "+refs/tags/*:refs/tags/*"]
        try:
            changed = _salt("git.fetch")(
                self.target,
                remote=self.remote,
                force=True,
                refspecs=refspecs,
                identity=self.identity,
                saltenv=_env(),
                **self.kw,
            )
        except CommandExecutionError as exc:
            return _fail(self.ret, f"Fetch failed:\n\n{exc}", self.comments)
        if changed:
            self.comments.append(f"Remote {self.remote} was fetched, resulting in updated refs")
        return None

    def _commit(self) -> str | dict[str, Any]:
        """The commit to check out (a failed result when ``rev`` names none)."""
        if self.is_sha:
            if self._describe(ignore_retcode=False) is None:
                return _fail(self.ret, f"Revision '{self.rev}' does not exist")
            return self.rev
        try:
            # the checkout's own refs: a local path, so neither HTTPS credentials (Salt passes them, and
            # git.remote_refs refuses them for a path) nor SSH keys
            refs = _salt("git.remote_refs")(self.target, ignore_retcode=False, **self.kw)
        except CommandExecutionError as exc:
            return _fail(self.ret, f"Failed to list refs for {self.remote}: {_strip_exc(exc)}")
        for ref in (f"refs/remotes/{self.remote}/{self.rev}", f"refs/tags/{self.rev}^{{}}", f"refs/tags/{self.rev}"):
            if ref in refs:
                return str(refs[ref])  # an annotated tag: the commit it points at (peeled), not the tag object
        return _fail(self.ret, f"Revision '{self.rev}' does not exist")
