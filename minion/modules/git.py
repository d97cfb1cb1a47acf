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
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import tempfile
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlparse, urlunparse

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __salt__


log = logging.getLogger(__name__)

__func_alias__ = {"rm_": "rm"}

_SSH_OPTS = (
    "-oStrictHostKeyChecking=no -oPasswordAuthentication=no -oKbdInteractiveAuthentication=no "
    "-oChallengeResponseAuthentication=no -oBatchMode=yes"
)
_FETCH_LINE = re.compile(r"[\s*+!-]*(?:([0-9a-f]+)\.\.\.?([0-9a-f]+)|\[(?:new (tag|branch)|tag update)\])\s+(.+)->")


def __virtual__() -> Any:
    if __salt__["cmd.which"]("git") is None:
        return False, "The git execution module cannot be loaded: git unavailable."
    return True


# ---------------------------------------------------------------- helpers


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _add_http_basic_auth(url: str, user: Any = None, password: Any = None, https_only: bool = False) -> str:
    """``url`` with ``user[:password]@`` in it (percent-encoded); ValueError for non-https with https_only."""
    if user is None and password is None:
        return url
    parts = urlparse(url)
    if https_only and parts.scheme != "https":
        raise ValueError("Basic Auth only supported for HTTPS")
    userinfo = quote(str(user), safe="")
    if password is not None:
        userinfo += ":" + quote(str(password), safe="")
    return urlunparse(parts._replace(netloc=f"{userinfo}@{parts.netloc}"))


def _redact(text: Any) -> Any:
    """Replace the credentials of http(s) URLs in ``text`` by ``<redacted>``."""
    if not isinstance(text, str):
        return text
    return re.sub(r"(https?)://.*@", r"\1://<redacted>@", text, flags=re.IGNORECASE)


def _auth_url(url: str, https_user: Any, https_pass: Any) -> str:
    try:
        return _add_http_basic_auth(
            url,
            None if https_user is None else str(https_user),
            None if https_pass is None else str(https_pass),
            https_only=True,
        )
    except ValueError as exc:
        raise SaltInvocationError(str(exc)) from None


def _expand_path(cwd: Any, user: Any) -> str:
    home = os.path.expanduser("~" + str(user) if user else "~")
    return os.path.join(home, str(cwd))


def _opts(opts: Any) -> list[str]:
    """Salt's opts: a list (items made strings) or a string split like a shell; a trailing ``--`` dropped."""
    if opts is None or opts == "":
        return []
    if isinstance(opts, (list, tuple)):
        return [str(x) for x in opts]
    out = shlex.split(opts) if isinstance(opts, str) else [str(opts)]
    return out[:-1] if out and out[-1] == "--" else out


def _git(git_opts: Any = "") -> list[str]:
    return ["git", *_opts(git_opts)]


def _clean(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if not str(k).startswith("__")}


def _invalid(kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise SaltInvocationError(
            "The following keyword arguments are not valid: " + ", ".join(f"{k}={v}" for k, v in kwargs.items())
        )


def _run_all(command: list[str], cwd: Any, user: Any, env: dict[str, str], **kwargs: Any) -> dict[str, Any]:
    return dict(
        _salt("cmd.run_all")(
            command,
            cwd=cwd,
            runas=user,
            env={"GIT_TERMINAL_PROMPT": "0", **env},
            python_shell=False,
            output_loglevel="quiet",
            **kwargs,
        )
    )


def _failed(command: list[str], result: dict[str, Any], redirect_stderr: bool) -> CommandExecutionError:
    msg = f"Command '{_redact(' '.join(command))}' failed"
    err = result.get("stdout" if redirect_stderr else "stderr")
    if err:
        msg += f": {_redact(err)}"
    return CommandExecutionError(msg)


def _identity_file(id_file: str, user: Any, saltenv: str) -> tuple[str | None, str | None]:
    """(path to use, temporary file to remove) for one identity; (None, None) when it is missing."""
    if "salt://" not in id_file:
        return (id_file, None) if os.path.isfile(id_file) else (None, None)
    fd, tmp = tempfile.mkstemp(prefix="briny-git-id-")
    os.close(fd)
    os.chmod(tmp, 0o600)
    got = _salt("cp.get_file")(id_file, tmp, saltenv)
    if not got:
        os.unlink(tmp)
        log.error("identity %s does not exist.", id_file)
        return None, None
    if user:
        os.chown(tmp, int(_salt("file.user_to_uid")(user)), -1)
    return tmp, tmp


def _git_run(
    command: list[str],
    cwd: Any = None,
    user: Any = None,
    identity: Any = None,
    ignore_retcode: bool = False,
    failhard: bool = True,
    redirect_stderr: bool = False,
    saltenv: str = "base",
    output_encoding: Any = None,
) -> dict[str, Any]:
    """Run ``command``; raise Salt's ``Command '...' failed: ...`` when it fails and ``failhard``."""
    call = {"ignore_retcode": ignore_retcode, "redirect_stderr": redirect_stderr, "output_encoding": output_encoding}
    if not identity:
        result = _run_all(command, cwd, user, {}, **call)
        if result["retcode"] != 0 and failhard:
            raise _failed(command, result, redirect_stderr)
        return result
    errors: list[str] = []
    missing: list[str] = []
    result = {}
    for id_file in identity if isinstance(identity, list) else [identity]:
        path, tmp = _identity_file(str(id_file), user, saltenv)
        if path is None:
            if "salt://" not in str(id_file):
                log.error("identity %s does not exist.", id_file)
                missing.append(str(id_file))
            continue
        log.info("Attempting git authentication using identity file %s", path)
        env = {"GIT_SSH_COMMAND": f"ssh {_SSH_OPTS} -i {shlex.quote(path)}"}
        try:
            result = _run_all(command, cwd, user, env, **call)
        finally:
            if tmp:
                os.unlink(tmp)
        if result["retcode"] == 0:
            return result
        err = result["stdout" if redirect_stderr else "stderr"]
        if err:
            errors.append(_redact(err))
    if failhard:
        msg = "Unable to authenticate using identity file:\n\n" + "\n".join(errors)
        if missing:
            msg += ("\n\n" if errors else "") + "The following identity file(s) were not found: " + ", ".join(missing)
        raise CommandExecutionError(msg)
    return result


def _stdout(command: list[str], cwd: Any, user: Any, **kwargs: Any) -> str:
    return str(_git_run(command, cwd=cwd, user=user, **kwargs)["stdout"])


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


# ---------------------------------------------------------------- revisions and branches


def _simple(cwd: str, user: Any, command: list[str], ignore_retcode: bool, output_encoding: Any, **kw: Any) -> str:
    return _stdout(
        command, _expand_path(cwd, user), user, ignore_retcode=ignore_retcode, output_encoding=output_encoding, **kw
    )


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


# ---------------------------------------------------------------- remotes


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
        ret.setdefault(parts[0], {})[action] = _redact(url) if redact_auth else url
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


# ---------------------------------------------------------------- config


def _scope(global_: Any, cwd: Any, user: Any) -> tuple[list[str], Any]:
    """The ``--global``/``--local`` option and the directory to run in."""
    if cwd is None:
        if not global_:
            raise SaltInvocationError("'cwd' argument required unless global=True")
        return ["--global"], None
    return (["--global"] if global_ else ["--local"]), _expand_path(cwd, user)


def _config_getter(
    get_opt: str,
    key: str,
    value_regex: Any,
    cwd: Any,
    user: Any,
    ignore_retcode: bool,
    output_encoding: Any,
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    kwargs = _clean(kwargs)
    global_ = kwargs.pop("global", False)
    _invalid(kwargs)
    scope, cwd = _scope(global_, cwd, user)
    command = ["git", "config", *scope, get_opt, str(key)]
    if get_opt == "--get-regexp" and value_regex is not None:
        command.append(str(value_regex))
    return _git_run(
        command, cwd=cwd, user=user, ignore_retcode=ignore_retcode, failhard=False, output_encoding=output_encoding
    )


def config_get(
    key: str,
    cwd: Any = None,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> Any:
    """The value of ``key`` (the last one), every value with ``all=True``, None when it is not set."""
    all_ = kwargs.pop("all", False)
    result = _config_getter("--get-all", key, None, cwd, user, ignore_retcode, output_encoding, kwargs)
    if result["retcode"] == 1:
        return None
    values = str(result["stdout"]).splitlines()
    if all_:
        return values
    return values[-1] if values else ""


def config_get_regexp(
    key: str,
    value_regex: Any = None,
    cwd: Any = None,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, list[str]]:
    """``{key: [values]}`` for the keys matching the regex ``key`` (and values matching ``value_regex``)."""
    result = _config_getter("--get-regexp", key, value_regex, cwd, user, ignore_retcode, output_encoding, kwargs)
    ret: dict[str, list[str]] = {}
    if result["retcode"] == 1:
        return ret
    for line in str(result["stdout"]).splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            ret.setdefault(parts[0], []).append(parts[1])
    return ret


config_get_regex = config_get_regexp


def config_set(
    key: str,
    value: Any = None,
    multivar: Any = None,
    cwd: Any = None,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> Any:
    """Set ``key`` to ``value`` (``add=True`` adds a value) or to the values of ``multivar``; returns every value."""
    kwargs = _clean(kwargs)
    add_ = kwargs.pop("add", False)
    global_ = kwargs.pop("global", False)
    _invalid(kwargs)
    scope, cwd = _scope(global_, cwd, user)
    if value is not None and multivar is not None:
        raise SaltInvocationError("Only one of 'value' and 'multivar' is permitted")
    prefix = ["git", "config"] + (["--global"] if global_ else [])
    run = {"cwd": cwd, "user": user, "ignore_retcode": ignore_retcode, "output_encoding": output_encoding}
    if value is not None:
        _git_run(prefix + ["--add" if add_ else "--replace-all", str(key), str(value)], **run)
    else:
        values = _split_multivar(multivar)
        for idx, item in enumerate(values):
            _git_run(prefix + ["--replace-all" if idx == 0 else "--add", str(key), item], **run)
    return config_get(
        key,
        cwd=cwd,
        user=user,
        ignore_retcode=ignore_retcode,
        output_encoding=output_encoding,
        **{"all": True, "global": global_},
    )


def _split_multivar(multivar: Any) -> list[str]:
    """Salt's multivar: a list (items made strings) or a comma-separated string."""
    if multivar is None:
        return []
    if isinstance(multivar, list):
        return [str(x) for x in multivar]
    return str(multivar).split(",")


def config_unset(
    key: str,
    value_regex: Any = None,
    cwd: Any = None,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> bool:
    """Unset ``key`` (values matching ``value_regex`` only; ``all=True`` for every value); True."""
    kwargs = _clean(kwargs)
    all_ = kwargs.pop("all", False)
    global_ = kwargs.pop("global", False)
    _invalid(kwargs)
    scope, cwd = _scope(global_, cwd, user)
    command = ["git", "config", "--unset-all" if all_ else "--unset", *scope, str(key)]
    command += [str(value_regex)] if value_regex is not None else []
    ret = _git_run(
        command, cwd=cwd, user=user, ignore_retcode=ignore_retcode, failhard=False, output_encoding=output_encoding
    )
    code = ret["retcode"]
    if code == 0:
        return True
    if code == 1:
        raise CommandExecutionError("Section or key is invalid")
    if code == 5:
        if (
            config_get(
                key,
                cwd=cwd,
                user=user,
                ignore_retcode=ignore_retcode,
                output_encoding=output_encoding,
                **{"global": global_},
            )
            is None
        ):
            raise CommandExecutionError(f"Key '{key}' does not exist")
        msg = f"Multiple values exist for key '{key}'"
        if value_regex is not None:
            msg += " and value_regex matches multiple values"
        raise CommandExecutionError(msg)
    if code == 6:
        raise CommandExecutionError("The value_regex is invalid")
    msg = f"Failed to unset key '{key}', git config returned exit code {code}"
    if ret.get("stderr"):
        msg += "; " + str(ret["stderr"])
    raise CommandExecutionError(msg)
