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
- ``git.detached``: ``target`` checked out at ``rev`` with a detached HEAD.
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
  the removed values (``changes: {key: [values]}``).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import string
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


log = logging.getLogger(__name__)


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _testing() -> bool:
    return bool(__opts__.get("test"))


def _env() -> str:
    return str(globals().get("__env__") or "base")


def _ret(name: str, result: bool | None = True) -> dict[str, Any]:
    return {"name": name, "result": result, "comment": "", "changes": {}}


def _invalid(kwargs: dict[str, Any]) -> str:
    return "The following keyword arguments are not valid: " + ", ".join(f"{k}={v}" for k, v in kwargs.items())


def _clean(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if not str(k).startswith("__")}


def _strip_exc(exc: Exception) -> str:
    """The error without the ``Command '...' failed: `` prefix."""
    return re.sub(r"^Command ['\"].+['\"] failed: ", "", str(exc))


def _format_comments(comments: list[str]) -> str:
    text = ". ".join(comments)
    return text + "." if len(comments) > 1 else text


def _fail(ret: dict[str, Any], msg: str, comments: list[str] | None = None) -> dict[str, Any]:
    ret["result"] = False
    if comments:
        msg += "\n\nChanges already made: " + _format_comments(comments)
    ret["comment"] = msg
    return ret


def _neutral_test(ret: dict[str, Any], comment: str) -> dict[str, Any]:
    ret["result"] = None
    ret["comment"] = comment
    return ret


def _would(comments: list[str] | str | None) -> str:
    if not comments:
        return ""
    text = comments if isinstance(comments, str) else _format_comments(comments)
    return "\n\nChanges {}made: {}".format("that would be " if _testing() else "", text)


def _uptodate(ret: dict[str, Any], target: str, comments: Any = None, local_changes: bool = False) -> dict[str, Any]:
    ret["comment"] = f"Repository {target} is up-to-date"
    if local_changes:
        ret["comment"] += ", but with uncommitted changes. Set 'force_reset' to True to purge uncommitted changes."
    ret["comment"] += _would(comments)
    return ret


def _short(sha: str | None) -> str | None:
    return sha[:7] if sha is not None else None


def _revs_equal(rev1: str | None, rev2: str | None, rev_type: str | None) -> bool:
    if rev1 is None or rev2 is None:
        return rev1 is rev2
    return rev1.startswith(rev2) if rev_type == "sha1" else rev1 == rev2


def _redact(url: Any) -> Any:
    if not isinstance(url, str):
        return url
    return re.sub(r"(https?)://.*@", r"\1://<redacted>@", url, flags=re.IGNORECASE)


def _auth_url(url: str, user: str | None, password: str | None) -> str:
    """``url`` with HTTPS basic auth in it, as the execution module builds it."""
    if user is None and password is None:
        return url
    from urllib.parse import quote, urlparse, urlunparse

    parts = urlparse(url)
    if parts.scheme != "https":
        raise ValueError("Basic Auth only supported for HTTPS")
    info = quote(str(user), safe="") + ("" if password is None else ":" + quote(str(password), safe=""))
    return urlunparse(parts._replace(netloc=f"{info}@{parts.netloc}"))


def _rev_parse(target: str, rev: str, **kw: Any) -> str | None:
    try:
        return str(_salt("git.rev_parse")(target, rev, ignore_retcode=True, **kw))
    except CommandExecutionError:
        return None


def _local_rev_and_branch(target: str, kw: dict[str, Any]) -> tuple[str | None, str | None]:
    out: list[str | None] = []
    for fun in ("git.revision", "git.current_branch"):
        try:
            out.append(str(_salt(fun)(target, ignore_retcode=True, **kw)))
        except CommandExecutionError:
            out.append(None)
    return out[0], out[1]


# ---------------------------------------------------------------- git.latest


class _Latest:
    """What ``git.latest`` knows about the remote and the arguments, shared by the clone and update paths."""

    if TYPE_CHECKING:  # the arguments of git.latest are attributes too, set from ``args`` in __init__
        rev: Any

        def __getattr__(self, name: str) -> Any: ...

    def __init__(self, ret: dict[str, Any], name: str, target: str, args: dict[str, Any]) -> None:
        self.ret, self.name, self.target = ret, name, target
        self.__dict__.update(args)
        self.kw = {"user": self.user, "password": self.password, "output_encoding": self.output_encoding}
        self.comments: list[str] = []
        self.desired_upstream: Any = False
        self.remote_rev: str | None = None
        self.remote_rev_type: str | None = None
        self.remote_loc: str | None = None
        self.default_branch: str | None = None
        self.all_remote_refs: dict[str, str] = {}

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

    def loc(self) -> str:
        return str(self.remote_loc).capitalize() if self.rev == "HEAD" else str(self.remote_loc)

    def branch_opts(self, local_branch: str | None, local_branches: list[str]) -> list[str] | None:
        if self.branch is not None and self.branch not in local_branches:
            return None  # a new branch checked out from the upstream tracks it already
        return ["--set-upstream-to", str(self.desired_upstream)]

    def upstream_plan(self, upstream: Any, local_branch: str | None, branches: list[str]) -> tuple[Any, str]:
        """(git branch options or None, what it does) to make the tracking branch the desired one."""
        desired = self.desired_upstream
        if not upstream and desired:
            return self.branch_opts(local_branch, branches), f"Tracking branch was set to {desired}"
        if upstream and desired is False:
            return ["--unset-upstream"], "Tracking branch was unset"
        if desired and upstream != desired:
            return self.branch_opts(local_branch, branches), f"Tracking branch was updated to {desired}"
        return None, ""

    def upstream_of(self, branch: str | None) -> Any:
        if branch is None:
            return None
        try:
            return _salt("git.rev_parse")(
                self.target, branch + "@{upstream}", opts=["--abbrev-ref"], ignore_retcode=True, **self.kw
            )
        except CommandExecutionError:
            return False

    # -- a target that is not a repository yet ----------------------------
    def clone(self) -> dict[str, Any]:
        ret, name, target = self.ret, self.name, self.target
        if os.path.isdir(target):
            contents = os.listdir(target)
            if self.force_clone:
                if _testing():
                    ret["changes"]["forced clone"] = True
                    ret["changes"]["new"] = f"{name} => {target}"
                    return _neutral_test(
                        ret,
                        f"Target directory {target} exists. Since force_clone=True, the contents of {target} "
                        f"would be deleted, and {name} would be cloned into this directory.",
                    )
                errors = {}
                for item in contents:
                    path = os.path.join(target, item)
                    try:
                        if os.path.isdir(path) and not os.path.islink(path):
                            shutil.rmtree(path)
                        else:
                            os.unlink(path)
                    except FileNotFoundError:
                        pass
                    except OSError as exc:
                        errors[path] = exc
                if errors:
                    lines = "\n".join(f"  {k}\n    {v}" for k, v in errors.items())
                    return _fail(ret, f"Unable to remove\n{lines}", self.comments)
                ret["changes"]["forced clone"] = True
            elif contents:
                return _fail(
                    ret,
                    f"Target '{target}' exists, is non-empty and is not a git repository. Set the 'force_clone' "
                    "option to True to remove this directory's contents and proceed with cloning the remote "
                    "repository",
                )
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
        try:
            _salt("git.clone")(
                target,
                name,
                opts=opts,
                identity=self.identity,
                https_user=self.https_user,
                https_pass=self.https_pass,
                saltenv=_env(),
                **self.kw,
            )
        except (CommandExecutionError, SaltInvocationError) as exc:
            return _fail(ret, f"Clone failed: {_strip_exc(exc)}", comments)
        ret["changes"]["new"] = f"{name} => {target}"
        kind = " as mirror" if self.mirror else " as bare repository" if self.bare else ""
        comments.append(f"{name} cloned to {target}{kind}")
        if not self.bare:
            if not self.remote_rev:
                if self.rev != "HEAD":
                    msg = f"Repository was cloned but is empty, so {self.remote}/{self.rev} cannot be checked out"
                    return _fail(ret, msg, comments)
            else:
                failed = self._after_clone()
                if failed:
                    return failed
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

    # -- a target that is a repository already ----------------------------
    def update(self) -> dict[str, Any]:
        try:
            revs = self._update()
        except Exception as exc:  # Salt reports any failure of the update as the state's comment
            log.error("Unexpected exception in git.latest state", exc_info=True)
            msg = _strip_exc(exc) if isinstance(exc, CommandExecutionError) else str(exc)
            return _fail(self.ret, msg, self.comments)
        if isinstance(revs, dict):
            return revs
        local_rev, new_rev = revs
        if not self.bare and not _revs_equal(new_rev, self.remote_rev, self.remote_rev_type):
            return _fail(self.ret, "Failed to update repository", self.comments)
        if local_rev != new_rev:
            self.ret["comment"] = _format_comments(self.comments)
            self.ret["changes"]["revision"] = {"old": local_rev, "new": new_rev}
            return self.ret
        return _uptodate(self.ret, self.target, self.comments)

    def _update(self) -> Any:
        ret, target, kw, comments = self.ret, self.target, self.kw, self.comments
        branch, remote, remote_rev, rtype = (
            self.branch,
            self.remote,
            self.remote_rev,
            self.remote_rev_type,
        )
        force_reset = self.force_reset
        branches = _salt("git.list_branches")(target, **kw)
        local_tags = set(_salt("git.list_tags")(target, **kw))
        local_rev, local_branch = _local_rev_and_branch(target, kw)
        if not self.bare and remote_rev is None and local_rev is not None:
            return _fail(ret, "Remote repository is empty, cannot update from a non-empty to an empty repository")
        base_rev, base_branch = local_rev, local_branch
        new_branch = branch is not None and branch != local_branch
        if new_branch:
            if branch not in branches:
                base_rev = remote_rev
            else:
                base_branch = branch
                try:
                    base_rev = str(_salt("git.rev_parse")(target, branch + "^{commit}", ignore_retcode=True, **kw))
                except CommandExecutionError as exc:
                    msg = f"Unable to get position of local branch '{branch}': {_strip_exc(exc)}"
                    return _fail(ret, msg, comments)
        remotes = _salt("git.remotes")(target, redact_auth=False, **kw)
        revs_match = _revs_equal(local_rev, remote_rev, rtype)
        try:
            local_changes = bool(not self.bare and _salt("git.diff")(target, "HEAD", **kw))
        except CommandExecutionError:
            local_changes = False
        if local_changes and revs_match:
            if force_reset is not True:
                return _uptodate(ret, target, comments, local_changes)
            if _testing():
                ret["changes"]["forced update"] = True
                return _neutral_test(
                    ret,
                    f"{target} is up-to-date, but with uncommitted changes. Since 'force_reset' is set to True, "
                    "these local changes would be reset. To only reset when there are changes in the remote "
                    "repository, set 'force_reset' to 'remote-changes'.",
                )
        has_remote_rev = self._has_remote_rev(base_rev, local_tags, remotes)
        if isinstance(has_remote_rev, dict):
            return has_remote_rev
        fast_forward: bool | None = False if (local_changes and force_reset != "remote-changes") else None
        if has_remote_rev:
            if not revs_match and not self.update_head and (branch is None or branch == local_branch):
                ret["comment"] = (
                    f"{self.loc()} is already present and local HEAD ({str(local_rev)[:7]}) does not match, but "
                    "update_head=False. HEAD has not been updated locally."
                )
                return ret
            if fast_forward is not False:
                fast_forward = True if base_rev is None else self._is_ancestor(base_rev, True)
        if fast_forward is False:
            if force_reset is False:
                return self._not_fast_forward(base_rev, local_branch, local_changes)
            merge_action = "hard-reset"
        else:
            merge_action = "fast-forwarded" if fast_forward is True else "updated"
        upstream = None if base_branch is None else self.upstream_of(base_branch)
        fetch_url = remotes[remote]["fetch"] if remote in remotes else None
        if remote_rev is not None and self.fetch_url != fetch_url:
            if _testing():
                actions = [f"Remote '{remote}' would be changed from {_redact(fetch_url)} to {_redact(self.fetch_url)}"]
                if not has_remote_rev:
                    actions.append("Remote would be fetched")
                if not revs_match and self.update_head:
                    ret["changes"]["revision"] = {"old": local_rev, "new": remote_rev}
                    if fast_forward is False:
                        ret["changes"]["forced update"] = True
                    actions.append(f"Repository would be {merge_action} to {_short(remote_rev)}")
                if ret["changes"]:
                    return _neutral_test(ret, _format_comments(actions))
                if not revs_match and not self.update_head:
                    ret["comment"] = _format_comments(actions)
                    return ret
                return _uptodate(ret, target, actions)
            _salt("git.remote_set")(
                target, url=self.name, remote=remote, https_user=self.https_user, https_pass=self.https_pass, **kw
            )
            if fetch_url is None:
                comments.append(f"Remote '{remote}' set to {_redact(self.fetch_url)}")
                ret["changes"]["new"] = f"{self.name} => {remote}"
            else:
                comments.append(f"Remote '{remote}' changed from {_redact(fetch_url)} to {_redact(self.fetch_url)}")
        if remote_rev is not None:
            if _testing():
                return self._test_update(
                    has_remote_rev, revs_match, local_rev, local_branch, branches, upstream, fast_forward, merge_action
                )
            done = self._apply_update(
                has_remote_rev,
                revs_match,
                local_rev,
                local_branch,
                branches,
                local_tags,
                upstream,
                fast_forward,
                base_rev,
                local_changes,
            )
            if done is not None:
                return done
        elif self.bare:
            if _testing():
                msg = f"Bare repository at {target} would be fetched"
                return _neutral_test(ret, msg) if ret["changes"] else _uptodate(ret, target, msg)
            try:
                changed = self._fetch()
            except CommandExecutionError as exc:
                return self._failed_fetch(exc)
            comments.append(
                f"Bare repository at {target} was fetched{', resulting in updated refs' if changed else ''}"
            )
        try:
            new_rev = str(_salt("git.revision")(cwd=target, ignore_retcode=True, **kw))
        except CommandExecutionError:
            new_rev = None
        return local_rev, new_rev

    def _is_ancestor(self, base_rev: str, ignore_retcode: bool) -> bool:
        return bool(
            _salt("git.merge_base")(
                self.target,
                refs=[base_rev, self.remote_rev],
                is_ancestor=True,
                ignore_retcode=ignore_retcode,
                **self.kw,
            )
        )

    def _has_remote_rev(self, base_rev: str | None, local_tags: set[str], remotes: dict[str, Any]) -> Any:
        """Is the remote revision in the checkout already (a dict: the state failed)?"""
        rtype, remote_rev, rev = self.remote_rev_type, self.remote_rev, self.rev
        if rtype == "sha1" and base_rev is not None and remote_rev is not None and base_rev.startswith(remote_rev):
            return True
        if remote_rev is None or _rev_parse(self.target, remote_rev + "^{commit}", **self.kw) is None:
            return False
        if rtype == "branch":
            return (
                self.remote in remotes and _rev_parse(self.target, str(self.desired_upstream), **self.kw) == remote_rev
            )
        if rtype == "tag":
            if rev not in local_tags:
                return False
            local_sha = _rev_parse(self.target, rev + "^{commit}", **self.kw)
            if local_sha == remote_rev:
                return True
            if not self.force_reset:
                return _fail(
                    self.ret,
                    f"'{rev}' is a tag, but the remote SHA1 for this tag ({_short(remote_rev)}) doesn't match the "
                    f"local SHA1 ({_short(local_sha)}). Set 'force_reset' to True to force this update.",
                )
            return False
        return rtype == "sha1"

    def _not_fast_forward(self, pre: str | None, local_branch: str | None, local_changes: bool) -> dict[str, Any]:
        rev, branch, post = self.rev, self.branch, self.remote_rev
        hint = ""
        if branch is None:
            if rev != "HEAD":
                if local_branch != rev:
                    hint = (
                        f" The desired rev ({rev}) differs from the name of the local branch ({local_branch}), if the "
                        "desired rev is a branch name then a forced update could possibly be avoided by setting the "
                        f"'branch' argument to '{rev}' instead."
                    )
            elif self.default_branch is not None and local_branch != self.default_branch:
                d = self.default_branch
                hint = (
                    f" The default remote branch ({d}) differs from the local branch ({local_branch}). This could be "
                    "caused by changing the default remote branch, or if the local branch was manually changed. "
                    "Rather than forcing an update, it may be advisable to set the 'branch' argument to "
                    f"'{d}' instead. To ensure that this state follows the '{d}' branch instead of the remote HEAD, "
                    f"set the 'rev' argument to '{d}'."
                )
        pre, post = _short(pre), _short(post)
        msg = "Repository would be updated {}{}, but {}. Set 'force_reset' to True{} to force this update{}.{}".format(
            f"from {pre} to {post}" if local_changes and pre != post else f"to {post}",
            f" (after checking out local branch '{branch}')" if branch is not None and branch != local_branch else "",
            "there are uncommitted changes" if local_changes else "this is not a fast-forward merge",
            " (or 'remote-changes')" if local_changes else "",
            " and discard these changes" if local_changes else "",
            hint,
        )
        return _fail(self.ret, msg, self.comments)

    def _fetch(self) -> Any:
        refspecs = (
            [
                f"refs/heads/{self.refspec_branch}:refs/remotes/{self.remote}/{self.refspec_branch}",
                f"+refs/tags/{self.refspec_tag}:refs/tags/{self.refspec_tag}",
            ]
            if self.fetch_tags
            else []
        )
        return _salt("git.fetch")(
            self.target,
            remote=self.remote,
            force=self.force_fetch,
            refspecs=refspecs,
            identity=self.identity,
            saltenv=_env(),
            **self.kw,
        )

    def _failed_fetch(self, exc: Exception) -> dict[str, Any]:
        msg = (
            "Fetch failed. Set 'force_fetch' to True to force the fetch if the failure was due to not being able to "
            f"fast-forward. Output of the fetch command follows:\n\n{_strip_exc(exc)}"
        )
        return _fail(self.ret, msg, self.comments)

    def _test_update(
        self,
        has_remote_rev: bool,
        revs_match: bool,
        local_rev: str | None,
        local_branch: str | None,
        branches: list[str],
        upstream: Any,
        fast_forward: bool | None,
        merge_action: str,
    ) -> dict[str, Any]:
        ret, branch, remote_rev, desired = self.ret, self.branch, self.remote_rev, self.desired_upstream
        actions = []
        if not has_remote_rev:
            actions.append(f"Remote '{self.remote}' would be fetched")
        new_branch = branch is not None and branch != local_branch
        if not revs_match and (self.update_head or new_branch):
            ret["changes"]["revision"] = {"old": local_rev, "new": remote_rev}
        if new_branch:
            if branch not in branches:
                actions.append(
                    f"New branch '{branch}' would be checked out, with {self.remote_loc} as a starting point"
                )
                if desired:
                    actions.append(f"Tracking branch would be set to {desired}")
            else:
                actions.append(f"Branch '{branch}' would be checked out and {merge_action} to {_short(remote_rev)}")
        elif not revs_match:
            if not self.update_head:
                actions.append(
                    f"Local HEAD ({str(local_rev)[:7]}) does not match {self.remote_loc} but update_head=False, HEAD "
                    "would not be updated locally"
                )
            elif fast_forward is True:
                actions.append(f"Repository would be fast-forwarded from {_short(local_rev)} to {_short(remote_rev)}")
            else:
                how = "hard-reset" if self.force_reset and has_remote_rev else "updated"
                actions.append(f"Repository would be {how} from {_short(local_rev)} to {_short(remote_rev)}")
        if not upstream and desired:
            actions.append(f"Tracking branch would be set to {desired}")
        elif upstream and desired is False:
            actions.append("Tracking branch would be unset")
        elif desired and upstream != desired:
            actions.append(f"Tracking branch would be updated to {desired}")
        if ret["changes"]:
            return _neutral_test(ret, _format_comments(actions))
        text = _format_comments(actions)
        if not revs_match and not self.update_head and text:
            ret["comment"] = text
            return ret
        return _uptodate(ret, self.target, actions)

    def _apply_update(
        self,
        has_remote_rev: bool,
        revs_match: bool,
        local_rev: str | None,
        local_branch: str | None,
        branches: list[str],
        local_tags: set[str],
        upstream: Any,
        fast_forward: bool | None,
        base_rev: str | None,
        local_changes: bool,
    ) -> dict[str, Any] | None:
        ret, target, kw, comments = self.ret, self.target, self.kw, self.comments
        rev, branch, remote_rev, force_reset = self.rev, self.branch, self.remote_rev, self.force_reset
        assert remote_rev is not None  # _update calls this only with a remote rev
        branch_opts, upstream_action = self.upstream_plan(upstream, local_branch, branches)
        if branch_opts is not None and local_branch is None:
            return _fail(
                ret,
                "Cannot set/unset upstream tracking branch, local HEAD refers to nonexistent branch. This may have "
                "been caused by cloning a remote repository for which the default branch was renamed or deleted. If "
                "you are unable to fix the remote repository, you can work around this by setting the 'branch' "
                "argument (which will ensure that the named branch is created if it does not already exist).",
                comments,
            )
        remote_tags = {
            ref.replace("refs/tags/", "")
            for ref in _salt("git.ls_remote")(
                cwd=target,
                remote=self.remote,
                opts="--tags",
                identity=self.identity,
                saltenv=_env(),
                ignore_retcode=True,
                **kw,
            )
            if "^{}" not in ref
        }
        if local_tags != remote_tags:
            has_remote_rev = False
            if remote_tags - local_tags:
                ret["changes"]["new_tags"] = sorted(remote_tags - local_tags)
            deleted = sorted(local_tags - remote_tags)
            if self.sync_tags and deleted:
                for tag_name in deleted:
                    try:
                        _salt("git.tag")(target, tag_name, opts="-d", **kw)
                    except CommandExecutionError as exc:
                        ret.setdefault("warnings", []).append(f"Failed to remove local tag '{tag_name}':\n\n{exc}\n\n")
                    else:
                        ret["changes"].setdefault("deleted_tags", []).append(tag_name)
                if ret["changes"].get("deleted_tags"):
                    removed = ", ".join(ret["changes"]["deleted_tags"])
                    comments.append(f"The following tags were removed from the local checkout: {removed}")
        if not has_remote_rev:
            try:
                changed = self._fetch()
            except CommandExecutionError as exc:
                return self._failed_fetch(exc)
            if changed:
                comments.append(f"{self.name} was fetched, resulting in updated refs")
            try:
                _salt("git.rev_parse")(target, remote_rev + "^{commit}", ignore_retcode=True, **kw)
            except CommandExecutionError as exc:
                return _fail(ret, f"Fetch did not successfully retrieve rev '{rev}' from {self.name}: {exc}")
            if not revs_match and not self.update_head and (branch is None or branch == local_branch):
                ret["comment"] = (
                    f"{self.loc()} is already present and local HEAD ({str(local_rev)[:7]}) does not match, but "
                    "update_head=False. HEAD has not been updated locally."
                )
                return ret
            fast_forward = True if base_rev is None else self._is_ancestor(base_rev, False)
            if (fast_forward is False and force_reset is False) or (
                fast_forward is True and local_changes and force_reset is False
            ):
                return self._not_fast_forward(base_rev, local_branch, local_changes)
        if branch is not None and branch != local_branch:
            if local_changes and not self.force_checkout:
                return _fail(
                    ret,
                    f"Local branch '{local_branch}' has uncommitted changes. Set 'force_checkout' to True to discard "
                    "them and proceed.",
                )
            if branch not in branches:
                checkout_rev = remote_rev if rev == "HEAD" else (self.desired_upstream or rev)
                opts = ["-b", branch]
            else:
                checkout_rev, opts = branch, []
            _salt("git.checkout")(target, checkout_rev, force=self.force_checkout, opts=opts, **kw)
            if opts:
                comments.append(f"New branch '{branch}' was checked out, with {self.remote_loc} as a starting point")
            else:
                comments.append(f"'{checkout_rev}' was checked out")
        if fast_forward is False:
            _salt("git.reset")(target, opts=["--hard", remote_rev], **kw)
            ret["changes"]["forced update"] = True
            if local_changes:
                comments.append("Uncommitted changes were discarded")
            comments.append(f"Repository was hard-reset to {self.remote_loc}")
        elif fast_forward is True and local_changes and force_reset is not False:
            _salt("git.discard_local_changes")(target, **kw)
            comments.append("Uncommitted changes were discarded")
        if branch_opts is not None:
            _salt("git.branch")(target, opts=branch_opts, **kw)
            comments.append(upstream_action)
        if fast_forward is True and not _revs_equal(base_rev, remote_rev, self.remote_rev_type):
            if self.desired_upstream or rev == "HEAD":
                if not _salt("git.symbolic_ref")(target, "HEAD", opts=["--quiet"], ignore_retcode=True, **kw):
                    return _fail(ret, "Unable to fast-forward, HEAD is detached", comments)
                _salt("git.merge")(target, rev=remote_rev, opts=["--ff-only"], **kw)
                comments.append(f"Repository was fast-forwarded to {self.remote_loc}")
            else:
                _salt("git.reset")(target, opts=["--hard", remote_rev if rev == "HEAD" else rev], **kw)
                comments.append(f"Repository was reset to {rev} (fast-forward)")
        if self.submodules:
            try:
                _salt("git.submodule")(
                    target, "update", opts=["--init", "--recursive"], identity=self.identity, saltenv=_env(), **kw
                )
            except CommandExecutionError as exc:
                return _fail(ret, "Failed to update submodules: " + _strip_exc(exc), comments)
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
        if isinstance(identity, str):
            identity = [identity]
        elif not isinstance(identity, list):
            return _fail(ret, "identity must be either a list or a string")
        identity = [os.path.expanduser(str(x)) for x in identity]
        for path in identity:
            if "salt://" in path:
                if not _salt("cp.cache_file")(path, _env()):
                    return _fail(ret, f"identity '{path}' does not exist.")
            elif not os.path.isabs(path):
                return _fail(ret, f"identity '{path}' is not an absolute path")
    if os.path.isfile(target):
        return _fail(ret, f"Target '{target}' exists and is a regular file, cannot proceed")
    try:
        fetch_url = _auth_url(name, https_user, https_pass)
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


# ---------------------------------------------------------------- git.present / cloned / detached


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


# ---------------------------------------------------------------- git config


def _scope_args(kwargs: dict[str, Any], ret: dict[str, Any], repo: Any, extra: tuple[str, ...] = ()) -> Any:
    """(global, extra values...) from kwargs, or a failed ret for unknown arguments or a missing repo."""
    kwargs = _clean(kwargs)
    global_ = kwargs.pop("global", False)
    values = [kwargs.pop(k, False) for k in extra]
    if kwargs:
        return _fail(ret, _invalid(kwargs))
    if not global_ and not repo:
        return _fail(ret, "Non-global config options require the 'repo' argument to be set")
    return (global_, *values)


def _values(value: Any, multivar: Any) -> tuple[list[str], Any]:
    """(the values wanted, how the comment shows them)."""
    if multivar is None:
        return [str(value)], f"'{value}'"
    values = [str(x) for x in multivar] if isinstance(multivar, list) else str(multivar).split(",")
    return values, values


def config_set(
    name: str,
    value: Any = None,
    multivar: Any = None,
    repo: Any = None,
    user: Any = None,
    password: Any = None,
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """``name`` set to ``value`` (or the values of ``multivar``) in ``repo``'s config, or ``user``'s with ``global``."""
    ret = _ret(str(name))
    if value is not None and multivar is not None:
        return _fail(ret, "Only one of 'value' and 'multivar' is permitted")
    scope = _scope_args(kwargs, ret, repo)
    if isinstance(scope, dict):
        return scope
    (global_,) = scope
    name = str(name)
    desired, shown = _values(value, multivar)
    if multivar is not None:
        multivar = desired
    elif value is not None:
        value = str(value)
    which = "Global key " if global_ else ""
    kw = {"user": user, "password": password, "output_encoding": output_encoding, "global": global_}
    try:
        pre = _salt("git.config_get")(cwd=repo, key=name, ignore_retcode=True, all=True, **kw)
    except (CommandExecutionError, SaltInvocationError) as exc:
        return _fail(ret, _strip_exc(exc))
    if desired == pre:
        ret["comment"] = f"{which}'{name}' is already set to {shown}"
        return ret
    verb = "added as" if pre is None else "set to"
    if _testing():
        ret["changes"] = {"old": pre, "new": desired}
        return _neutral_test(ret, f"{which}'{name}' would be {verb} {shown}")
    try:
        post = _salt("git.config_set")(cwd=repo, key=name, value=value, multivar=multivar, **kw)
    except (CommandExecutionError, SaltInvocationError) as exc:
        return _fail(ret, f"Failed to set {which.lower()}'{name}' to {shown}: {_strip_exc(exc)}")
    if pre != post:
        ret["changes"][name] = {"old": pre, "new": post}
    if post != desired:
        return _fail(ret, f"Failed to set {which.lower()}'{name}' to {shown}")
    ret["comment"] = f"{which}'{name}' was {verb} {shown}"
    return ret


def config_unset(
    name: str,
    value_regex: Any = None,
    repo: Any = None,
    user: Any = None,
    password: Any = None,
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """No key matching the regex ``name`` (anchored) with a value matching ``value_regex``; ``all`` for multivars."""
    ret = _ret(str(name))
    ret["comment"] = "No matching keys are set"
    scope = _scope_args(kwargs, ret, repo, ("all",))
    if isinstance(scope, dict):
        return scope
    global_, all_ = scope
    name = str(name)
    value_regex = None if value_regex is None else str(value_regex)
    key = "^" + name.lstrip("^").rstrip("$") + "$"
    kw = {"user": user, "password": password, "output_encoding": output_encoding, "global": global_}

    def matches(regex: Any) -> dict[str, list[str]]:
        return dict(_salt("git.config_get_regexp")(cwd=repo, key=key, value_regex=regex, ignore_retcode=True, **kw))

    try:
        pre_matches = matches(value_regex)
    except (CommandExecutionError, SaltInvocationError) as exc:
        return _fail(ret, _strip_exc(exc))
    if not pre_matches:
        return ret
    if not all_:
        greedy = [f"{k} ({', '.join(v)})" for k, v in pre_matches.items() if len(v) > 1]
        if greedy:
            if value_regex is not None:
                what = "Multiple values are matched by value_regex for the following keys"
            else:
                what = "Multivar(s) matched by the key expression"
            return _fail(ret, f"{what} (set 'all' to True to force removal): {'; '.join(greedy)}")
    if _testing():
        ret["changes"] = pre_matches
        return _neutral_test(ret, f"{len(pre_matches)} key(s) would have value(s) unset")
    pre = pre_matches if value_regex is None else matches(None)
    failed = []
    for key_name in pre_matches:
        try:
            _salt("git.config_unset")(cwd=repo, key=key_name, value_regex=value_regex, all=all_, **kw)
        except CommandExecutionError as exc:
            log.error("Failed to unset '%s': %s", key_name, _strip_exc(exc))
            failed.append(key_name)
    if failed:
        return _fail(
            ret,
            "Error(s) occurred unsetting values for the following keys (see the minion log for details): "
            + ", ".join(failed),
        )
    post = matches(None)
    for key_name, values in pre.items():
        if key_name not in post:
            ret["changes"][key_name] = values
        unset = [v for v in values if v not in post.get(key_name, [])]
        if unset:
            ret["changes"][key_name] = unset
    post_matches = post if value_regex is None else matches(value_regex)
    if post_matches:
        left = "; ".join(f"{k} ({', '.join(v)})" for k, v in post_matches.items())
        return _fail(ret, f"Failed to unset value(s): {left}")
    ret["comment"] = "Value(s) successfully unset"
    return ret
