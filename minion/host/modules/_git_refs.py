"""Revisions, branches and tags for the ``git`` execution module (a private sibling of
``git.py``, which imports it; its public functions are the module's)."""

from __future__ import annotations

from typing import Any

from briny.common.exceptions import SaltInvocationError

from ._git_cmd import _clean, _expand_path, _git, _git_run, _invalid, _opts, _simple


def rev_parse(
    cwd: str,
    rev: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git rev-parse [opts] [rev]``."""
    command = _git(git_opts) + ["rev-parse", *_opts(opts)] + ([str(rev)] if rev is not None else [])
    return _simple(cwd, user, command, ignore_retcode, output_encoding)


def revision(
    cwd: str,
    rev: str = "HEAD",
    short: bool = False,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """The SHA1 of ``rev`` (``short`` for the abbreviated one)."""
    command = ["git", "rev-parse", *(["--short"] if short else []), str(rev)]
    return _simple(cwd, user, command, ignore_retcode, output_encoding)


def current_branch(
    cwd: str, user: Any = None, password: Any = None, ignore_retcode: bool = False, output_encoding: Any = None
) -> str:
    """The checked-out branch (``HEAD`` when detached)."""
    return _simple(cwd, user, ["git", "rev-parse", "--abbrev-ref", "HEAD"], ignore_retcode, output_encoding)


def describe(
    cwd: str,
    rev: str = "HEAD",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git describe --always REV``."""
    return _simple(cwd, user, ["git", "describe", "--always", str(rev)], ignore_retcode, output_encoding)


def list_branches(
    cwd: str,
    remote: bool = False,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> list[str]:
    """Local branch names (``remote=True``: remote-tracking ones, ``origin/main``)."""
    ref = "refs/remotes/" if remote else "refs/heads/"
    command = ["git", "for-each-ref", "--format", "%(refname:short)", ref]
    return _simple(cwd, user, command, ignore_retcode, output_encoding).splitlines()


def list_tags(
    cwd: str, user: Any = None, password: Any = None, ignore_retcode: bool = False, output_encoding: Any = None
) -> list[str]:
    """Tag names."""
    command = ["git", "for-each-ref", "--format", "%(refname:short)", "refs/tags/"]
    return _simple(cwd, user, command, ignore_retcode, output_encoding).splitlines()


def merge_base(
    cwd: str,
    refs: Any = None,
    octopus: bool = False,
    is_ancestor: bool = False,
    independent: bool = False,
    fork_point: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> Any:
    """``git merge-base``: the best common ancestor (a list with ``all=True``), or a bool with ``is_ancestor``."""
    kwargs = _clean(kwargs)
    all_ = kwargs.pop("all", False)
    _invalid(kwargs)
    if all_ and (independent or is_ancestor or fork_point):
        raise SaltInvocationError(
            "The 'all' argument is not compatible with 'independent', 'is_ancestor', or 'fork_point'"
        )
    refs = (
        []
        if refs is None
        else [str(r) for r in refs]
        if isinstance(refs, (list, tuple))
        else [x.strip() for x in str(refs).split(",")]
    )
    if len([x for x in (octopus, independent, is_ancestor, fork_point) if x]) > 1:
        raise SaltInvocationError("Only one of 'octopus', 'independent', 'is_ancestor', and 'fork_point' is permitted")
    if is_ancestor and len(refs) != 2:
        raise SaltInvocationError("Two refs/commits are required if 'is_ancestor' is True")
    if fork_point:
        if len(refs) > 1:
            raise SaltInvocationError("At most one ref/commit can be passed if 'fork_point' is specified")
        refs = refs or ["HEAD"]
    command = _git(git_opts) + ["merge-base", *_opts(opts)] + (["--all"] if all_ else [])
    if octopus:
        command.append("--octopus")
    elif is_ancestor:
        command.append("--is-ancestor")
    elif independent:
        command.append("--independent")
    elif fork_point:
        command += ["--fork-point", str(fork_point)]
    result = _git_run(
        command + refs,
        cwd=_expand_path(cwd, user),
        user=user,
        ignore_retcode=ignore_retcode,
        failhard=not is_ancestor,
        output_encoding=output_encoding,
    )
    if is_ancestor:
        return result["retcode"] == 0
    bases = str(result["stdout"]).splitlines()
    return bases if all_ else bases[0]


def symbolic_ref(
    cwd: str,
    ref: str,
    value: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git symbolic-ref [opts] REF [VALUE]``."""
    options = _opts(opts)
    if value is not None and any(x in options for x in ("-d", "--delete")):
        raise SaltInvocationError("Value cannot be set for symbolic ref if -d/--delete is included in opts")
    command = _git(git_opts) + ["symbolic-ref", *options, str(ref)] + ([str(value)] if value else [])
    return _simple(cwd, user, command, ignore_retcode, output_encoding)


def tag(
    cwd: str,
    name: str,
    ref: str = "HEAD",
    message: Any = None,
    opts: Any = "",
    git_opts: Any = "",
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
) -> str:
    """``git tag`` (annotated with ``message``); ``opts="-d"`` deletes."""
    options = [x for x in _opts(opts) if x not in ("-a", "--annotate")]
    if any(x == "-m" or "--message" in x for x in options):
        raise SaltInvocationError('Tag messages must be passed in the "message" argument')
    command = (
        _git(git_opts) + ["tag"] + (["-a", "-m", str(message)] if message is not None else []) + options + [str(name)]
    )
    if "-d" not in options and "--delete" not in options:
        command.append(str(ref))
    return _simple(cwd, user, command, ignore_retcode, output_encoding, redirect_stderr=True)
