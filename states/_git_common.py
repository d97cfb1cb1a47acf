"""What the ``git`` states share (a private sibling of ``git.py``, imported by it and by its
other parts): the result dict, Salt's comment formats, test mode, the local revision, and the
checks of arguments several states take (``identity``, a ``target`` to clone into)."""

from __future__ import annotations

import os
import re
import shutil
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from ._access import _env, _salt, _testing


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


def _identities(identity: Any, word: str = "identity") -> list[str] | str:
    """``identity`` as a list of key paths (``~`` expanded), or Salt's error: not a string or
    a list, a ``salt://`` key the file server does not have, a relative path. ``word`` is
    how the state names the argument in its errors (``git.latest``: identity, ``git.detached``:
    Identity)."""
    if isinstance(identity, str):
        identity = [identity]
    elif not isinstance(identity, list):
        return f"{word} must be either a list or a string"
    paths = [os.path.expanduser(str(x)) for x in identity]
    for path in paths:
        if "salt://" in path:
            if not _salt("cp.cache_file")(path, _env()):
                return f"{word} '{path}' does not exist."
        elif not os.path.isabs(path):
            return f"{word} '{path}' is not an absolute path"
    return paths


def _empty_dir(target: str) -> str | None:
    """Remove what ``target`` holds (``force_clone``); Salt's ``Unable to remove ...`` message
    naming what could not be removed, or None."""
    errors = {}
    for item in os.listdir(target):
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
    if not errors:
        return None
    lines = "\n".join(f"  {k}\n    {v}" for k, v in errors.items())
    return f"Unable to remove\n{lines}"


def _make_room(
    ret: dict[str, Any], name: str, target: str, force_clone: bool, comments: list[str], predict: dict[str, Any]
) -> dict[str, Any] | None:
    """Get ``target`` ready for a clone of ``name``: a result to return (Salt's failure for a
    non-empty directory without ``force_clone``, or test mode's word on emptying it, with the
    ``predict`` changes), or None to go on (emptied, ``forced clone`` in the changes)."""
    if not os.path.isdir(target):
        return None
    if force_clone:
        if _testing():
            ret["changes"].update(predict)
            return _neutral_test(
                ret,
                f"Target directory {target} exists. Since force_clone=True, the contents of {target} would be "
                f"deleted, and {name} would be cloned into this directory.",
            )
        failed = _empty_dir(target)
        if failed:
            return _fail(ret, failed, comments)
        ret["changes"]["forced clone"] = True
    elif os.listdir(target):
        return _fail(
            ret,
            f"Target '{target}' exists, is non-empty and is not a git repository. Set the 'force_clone' option to "
            "True to remove this directory's contents and proceed with cloning the remote repository",
        )
    return None


def _clone(target: str, name: str, opts: list[str], auth: dict[str, Any], kw: dict[str, Any]) -> str | None:
    """``git.clone`` of ``name`` into ``target`` with ``opts`` and ``auth`` (``identity``,
    ``https_user``, ``https_pass``); git's error (without Salt's command prefix), or None."""
    try:
        _salt("git.clone")(target, name, opts=opts, saltenv=_env(), **auth, **kw)
    except (CommandExecutionError, SaltInvocationError) as exc:
        return _strip_exc(exc)
    return None
