"""Running git for the ``git`` execution module (a private sibling of ``git.py``, which imports
it, as ``_git_refs.py``, ``_git_remote.py`` and ``_git_config.py`` do): the command line, the
user, HTTPS credentials put into URLs, SSH identities, and Salt's ``Command '...' failed: ...``
errors with credentials redacted. See ``git.py``'s docstring."""

from __future__ import annotations

import logging
import os
import shlex
import tempfile
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.common.urlauth import add_http_basic_auth, redact_http_basic_auth

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

log = logging.getLogger(__name__)

_SSH_OPTS = (
    "-oStrictHostKeyChecking=no -oPasswordAuthentication=no -oKbdInteractiveAuthentication=no "
    "-oChallengeResponseAuthentication=no -oBatchMode=yes"
)


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _auth_url(url: str, https_user: Any, https_pass: Any) -> str:
    try:
        return add_http_basic_auth(
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
    msg = f"Command '{redact_http_basic_auth(' '.join(command))}' failed"
    err = result.get("stdout" if redirect_stderr else "stderr")
    if err:
        msg += f": {redact_http_basic_auth(err)}"
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
        plain = _run_all(command, cwd, user, {}, **call)
        if plain["retcode"] != 0 and failhard:
            raise _failed(command, plain, redirect_stderr)
        return plain
    errors: list[str] = []
    missing: list[str] = []
    result: dict[str, Any] = {}
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
            errors.append(redact_http_basic_auth(err))
    if failhard:
        msg = "Unable to authenticate using identity file:\n\n" + "\n".join(errors)
        if missing:
            msg += ("\n\n" if errors else "") + "The following identity file(s) were not found: " + ", ".join(missing)
        raise CommandExecutionError(msg)
    return result


def _stdout(command: list[str], cwd: Any, user: Any, **kwargs: Any) -> str:
    return str(_git_run(command, cwd=cwd, user=user, **kwargs)["stdout"])


def _simple(cwd: str, user: Any, command: list[str], ignore_retcode: bool, output_encoding: Any, **kw: Any) -> str:
    return _stdout(
        command, _expand_path(cwd, user), user, ignore_retcode=ignore_retcode, output_encoding=output_encoding, **kw
    )
