"""``git.latest`` (a private sibling of ``git.py``, which imports it): the arguments, the
remote's refs, and a clone into a target that is not a checkout yet; the update of an existing
checkout is ``_git_update.py``'s. See ``git.py``'s docstring."""

from __future__ import annotations

import os
import string
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
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
    _revs_equal,
    _strip_exc,
)
from ._git_update import _Update


class _Latest(_Update):
    """``git.latest`` from the remote's refs to a clone or an update."""

    # -- the remote's refs -------------------------------------------------
    def read_remote(self) -> dict[str, Any] | None:
        try:
            refs = _salt("git.remote_refs")(
                self.name,
                heads=False,
                tags=False,
                identity=self.identity,
                https_user=self.https_user,
                https_pass=self.https_pass,
                ignore_retcode=False,
                saltenv=_env(),
                **self.kw,
            )
        except (CommandExecutionError, SaltInvocationError) as exc:
            return _fail(self.ret, f"Failed to check remote refs: {_strip_exc(exc)}")
        self.all_remote_refs = refs
        head = refs.get("HEAD")
        if head is not None:
            self.default_branch = next(
                (
                    r.partition("refs/heads/")[2]
                    for r, sha in refs.items()
                    if r.startswith("refs/heads/") and sha == head
                ),
                None,
            )
        rev = self.rev
        if self.bare:
            return None
        if rev == "HEAD":
            if head is not None:
                self.remote_rev, self.remote_rev_type, self.desired_upstream = head, "sha1", None
        elif "refs/heads/" + rev in refs:
            self.remote_rev, self.remote_rev_type = refs["refs/heads/" + rev], "branch"
            self.desired_upstream = f"{self.remote}/{rev}"
        elif "refs/tags/" + rev + "^{}" in refs:
            self.remote_rev, self.remote_rev_type = refs["refs/tags/" + rev + "^{}"], "tag"
        elif "refs/tags/" + rev in refs:
            self.remote_rev, self.remote_rev_type = refs["refs/tags/" + rev], "tag"
        elif len(rev) <= 40 and all(c in string.hexdigits for c in rev):
            self.rev = rev = rev.lower()
            self.remote_rev, self.remote_rev_type = rev, "sha1"
        if self.remote_rev_type == "sha1":
            assert self.remote_rev is not None
            self.remote_loc = f"remote HEAD ({self.remote_rev[:7]})" if rev == "HEAD" else self.remote_rev[:7]
        elif self.remote_rev is not None:
            where = self.desired_upstream if self.remote_rev_type == "branch" else rev
            self.remote_loc = f"{where} ({self.remote_rev[:7]})"
        return None

    # -- a target that is not a repository yet ----------------------------
    def clone(self) -> dict[str, Any]:
        ret, name, target = self.ret, self.name, self.target
        predict = {"forced clone": True, "new": f"{name} => {target}"}
        done = _make_room(ret, name, target, self.force_clone, self.comments, predict)
        if done is not None:
            return done
        if _testing():
            ret["changes"]["new"] = f"{name} => {target}"
            return _neutral_test(ret, f"Repository {name} would be cloned to {target}")
        try:
            return self._clone()
        except CommandExecutionError as exc:
            return _fail(ret, _strip_exc(exc), self.comments)

    def _clone(self) -> dict[str, Any]:
        ret, name, target, comments = self.ret, self.name, self.target, self.comments
        opts = ["--mirror"] if self.mirror else ["--bare"] if self.bare else []
        if self.remote != "origin":
            opts += ["--origin", self.remote]
        if self.depth is not None:
            opts += ["--depth", str(self.depth), "--branch", self.rev]
        auth = {"identity": self.identity, "https_user": self.https_user, "https_pass": self.https_pass}
        failed = _clone(target, name, opts, auth, self.kw)
        if failed is not None:
            return _fail(ret, f"Clone failed: {failed}", comments)
        ret["changes"]["new"] = f"{name} => {target}"
        kind = " as mirror" if self.mirror else " as bare repository" if self.bare else ""
        comments.append(f"{name} cloned to {target}{kind}")
        if not self.bare:
            if not self.remote_rev:
                if self.rev != "HEAD":
                    msg = f"Repository was cloned but is empty, so {self.remote}/{self.rev} cannot be checked out"
                    return _fail(ret, msg, comments)
            else:
                stopped = self._after_clone()
                if stopped:
                    return stopped
        if self.submodules and self.remote_rev:
            try:
                _salt("git.submodule")(
                    target, "update", opts=["--init", "--recursive"], identity=self.identity, **self.kw
                )
            except CommandExecutionError as exc:
                return _fail(ret, "Failed to update submodules: " + _strip_exc(exc), comments)
        new_rev = _local_rev_and_branch(target, self.kw)[0]
        ret["comment"] = _format_comments(comments)
        if new_rev is not None:
            ret["changes"]["revision"] = {"old": None, "new": new_rev}
        return ret

    def _after_clone(self) -> dict[str, Any] | None:
        ret, target, comments, rev = self.ret, self.target, self.comments, self.rev
        if self.remote_rev_type == "tag" and rev not in _salt("git.list_tags")(target, **self.kw):
            return _fail(ret, f"Revision '{rev}' does not exist in clone", comments)
        if self.branch is not None and self.branch not in _salt("git.list_branches")(target, **self.kw):
            start = self.remote_rev if rev == "HEAD" else (self.desired_upstream or rev)
            _salt("git.checkout")(target, start, opts=["-b", self.branch], **self.kw)
            comments.append(f"Branch '{self.branch}' checked out, with {self.remote_loc} as a starting point")
        local_rev, local_branch = _local_rev_and_branch(target, self.kw)
        if local_branch is None and self.remote_rev is not None and "HEAD" not in self.all_remote_refs:
            return _fail(
                ret,
                "Remote HEAD refers to a ref that does not exist. This can happen when the default branch on the "
                "remote repository is renamed or deleted. If you are unable to fix the remote repository, you can "
                "work around this by setting the 'branch' argument (which will ensure that the named branch is "
                "created if it does not already exist).",
                comments,
            )
        if not _revs_equal(local_rev, self.remote_rev, self.remote_rev_type):
            _salt("git.reset")(target, opts=["--hard", self.remote_rev], **self.kw)
            comments.append(f"Repository was reset to {self.remote_loc}")
        upstream = self.upstream_of(local_branch) if local_branch is not None else False
        opts, action = self.upstream_plan(upstream, local_branch, _salt("git.list_branches")(target, **self.kw))
        if opts is not None:
            _salt("git.branch")(target, opts=opts, **self.kw)
            comments.append(action)
        return None


def latest(
    name: str,
    target: Any = None,
    rev: Any = "HEAD",
    branch: Any = None,
    user: Any = None,
    password: Any = None,
    update_head: bool = True,
    force_checkout: bool = False,
    force_clone: bool = False,
    force_fetch: bool = False,
    force_reset: Any = False,
    submodules: bool = False,
    bare: bool = False,
    mirror: bool = False,
    remote: Any = "origin",
    fetch_tags: bool = True,
    sync_tags: bool = True,
    depth: Any = None,
    identity: Any = None,
    https_user: Any = None,
    https_pass: Any = None,
    refspec_branch: str = "*",
    refspec_tag: str = "*",
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Make ``target`` a clone of ``name`` checked out at ``rev`` (see the module docstring)."""
    ret = _ret(name)
    kwargs = _clean(kwargs)
    if kwargs:
        return _fail(ret, _invalid(kwargs))
    if not remote:
        return _fail(ret, "'remote' argument is required")
    if not target:
        return _fail(ret, "'target' argument is required")
    if not rev:
        return _fail(ret, f"'{rev}' is not a valid value for the 'rev' argument")
    if force_reset not in (True, False, "remote-changes"):
        return _fail(ret, "'force_reset' must be one of True, False, or 'remote-changes'")
    rev, target = str(rev), str(target)
    if not os.path.isabs(target):
        return _fail(ret, f"target '{target}' is not an absolute path")
    branch, user, password, remote, https_user, https_pass = (
        None if v is None else str(v) for v in (branch, user, password, remote, https_user, https_pass)
    )
    if identity is not None:
        identity = _identities(identity)
        if isinstance(identity, str):
            return _fail(ret, identity)
    if os.path.isfile(target):
        return _fail(ret, f"Target '{target}' exists and is a regular file, cannot proceed")
    try:
        fetch_url = add_http_basic_auth(name, https_user, https_pass, https_only=True)
    except ValueError as exc:
        return _fail(ret, str(exc))
    if mirror:
        bare = True
    if rev != "HEAD" and bare:
        return _fail(ret, "'rev' is not compatible with the 'mirror' and 'bare' arguments")
    state = _Latest(
        ret,
        name,
        target,
        {
            "rev": rev,
            "branch": branch,
            "user": user,
            "password": password,
            "update_head": update_head,
            "force_checkout": force_checkout,
            "force_clone": force_clone,
            "force_fetch": force_fetch,
            "force_reset": force_reset,
            "submodules": submodules,
            "bare": bare,
            "mirror": mirror,
            "remote": remote,
            "fetch_tags": fetch_tags,
            "sync_tags": sync_tags,
            "depth": depth,
            "identity": identity,
            "https_user": https_user,
            "https_pass": https_pass,
            "refspec_branch": refspec_branch,
            "refspec_tag": refspec_tag,
            "output_encoding": output_encoding,
            "fetch_url": fetch_url,
        },
    )
    failed = state.read_remote()
    if failed:
        return failed
    if depth is not None and state.remote_rev_type not in ("branch", "tag"):
        return _fail(
            ret, "When 'depth' is used, 'rev' must be set to the name of a branch or tag on the remote repository"
        )
    if state.remote_rev is None and not bare and state.rev != "HEAD":
        return _fail(ret, f"No revision matching '{state.rev}' exists in the remote repository")
    gitdir = os.path.join(target, "refs" if bare else ".git")
    if os.path.isdir(gitdir) or _salt("git.is_worktree")(target, user=user, password=password):
        return state.update()
    return state.clone()
