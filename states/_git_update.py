"""``git.latest`` on a target that is a checkout already (a private sibling of ``git.py``;
``_git_latest.py`` builds on it): what the state knows about the remote and its arguments, and
the update: fetch, fast-forward or hard-reset, the local branch and its upstream, tags,
submodules, and what test mode says it would do."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from briny.common.urlauth import redact_http_basic_auth

from ._access import _env, _salt, _testing
from ._git_common import (
    _fail,
    _format_comments,
    _local_rev_and_branch,
    _neutral_test,
    _rev_parse,
    _revs_equal,
    _short,
    _strip_exc,
    _uptodate,
)

log = logging.getLogger(__name__)


class _Update:
    """What ``git.latest`` knows about the remote and the arguments (``_Latest`` reads the remote
    into it), and the update of a target that is a checkout already."""

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

    # -- a target that is a repository already ----------------------------
    def update(self) -> dict[str, Any]:
        try:
            revs = self._update()
        except Exception as exc:  # Salt reports any failure of the update as the state's comment
            log.exception("Unexpected exception in git.latest state")
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
                actions = [
                    f"Remote '{remote}' would be changed from {redact_http_basic_auth(fetch_url)} to {redact_http_basic_auth(self.fetch_url)}"
                ]
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
                comments.append(f"Remote '{remote}' set to {redact_http_basic_auth(self.fetch_url)}")
                ret["changes"]["new"] = f"{self.name} => {remote}"
            else:
                comments.append(
                    f"Remote '{remote}' changed from {redact_http_basic_auth(fetch_url)} to {redact_http_basic_auth(self.fetch_url)}"
                )
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
