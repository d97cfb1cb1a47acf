"""Execution module ``cmd``: run commands on the managed host.

Runs on the minion and in ``briny-call`` (never on the master: a template
calling ``cmd.run`` makes the minion compile its own highstate). Arguments,
return values, logging and errors follow Salt 3007's ``cmdmod``:

- ``cmd.run`` returns the output with stderr merged into stdout (trailing
  whitespace stripped); ``run_stdout`` / ``run_stderr`` one stream;
  ``run_all`` ``{"pid", "retcode", "stdout", "stderr"}``; ``retcode`` the
  exit status. A command that exits non-zero is not an error: it is logged
  at ERROR level (unless ``ignore_retcode``), and ``__context__["retcode"]``
  is set so the CLI exits non-zero, as Salt's does.
- Errors raise :class:`CommandExecutionError`: missing executable (without a
  shell), bad ``cwd``, unknown ``runas`` user, bad ``umask``, or a non-zero
  exit with ``raise_err=True``.
- ``timeout``: the command's process group is killed and the result is
  ``retcode 1`` with stdout ``"<cmd> : Timed out after <N> seconds"``.

**python_shell, and how a CLI call is told apart.** As in Salt, when
``python_shell`` is not given it is True only for a call that came straight
from a user (``briny-call cmd.run 'a | b'``, ``briny '*' cmd.run ...``) and
False for a call from a template or another module, where the command is
split with :func:`shlex.split` and run without a shell (so ``|``, ``$HOME``
are passed literally). The edges mark a direct call by passing the keyword
argument ``__pub_jid`` (and the other ``__pub_*`` keys: ``__pub_fun``,
``__pub_pid``, ``__pub_tgt``), exactly as Salt's minion and ``salt-call``
do; functions here ignore every other ``__pub_*`` key. Setting
``cmd_safe: False`` in the config makes python_shell default to True
everywhere.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import signal
import subprocess
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.common.logsetup import LEVELS

from ._cmd_args import POSITIONAL as _POSITIONAL
from ._cmd_script import script as script
from ._cmd_script import script_retcode as script_retcode
from briny.common.truth import is_true as _is_true

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __grains__, __opts__

__all__ = ["script", "script_retcode"]


log = logging.getLogger(__name__)

_LOCALE_VARS = (
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_COLLATE",
    "LC_MONETARY",
    "LC_MESSAGES",
    "LC_PAPER",
    "LC_NAME",
    "LC_ADDRESS",
    "LC_TELEPHONE",
    "LC_MEASUREMENT",
    "LC_IDENTIFICATION",
    "LANGUAGE",
)


def _default_shell() -> str:
    return str(__grains__.get("shell") or os.environ.get("SHELL") or "/bin/sh")


def _python_shell_default(python_shell: bool | None, kwargs: Mapping[str, Any]) -> bool:
    if python_shell is not None:
        return _is_true(python_shell)
    if kwargs.get("__pub_jid"):
        return True
    return __opts__.get("cmd_safe", True) is False


def _log_name(cmd: Any) -> str:
    if isinstance(cmd, (list, tuple)):
        return str(cmd[0]) if cmd else ""
    parts = str(cmd).split()
    return parts[0] if parts else ""


def _env(env: Any, clean_env: bool, reset_system_locale: bool, prepend_path: str | None, pw: Any) -> dict[str, str]:
    if env is None:
        env = {}
    if isinstance(env, list):
        merged: dict[str, Any] = {}
        for item in env:
            if isinstance(item, Mapping):
                merged.update(item)
            else:
                log.error("Environment variable '%s' passed without a value. Setting value to an empty string", item)
                merged[str(item)] = ""
        env = merged
    if not isinstance(env, Mapping):
        raise SaltInvocationError(f"Invalid input: env must be a dict, not {type(env).__name__}")
    run_env: dict[str, str] = {} if clean_env else dict(os.environ)
    if pw is not None:
        run_env.update(
            {"HOME": pw.pw_dir, "USER": pw.pw_name, "LOGNAME": pw.pw_name, "SHELL": pw.pw_shell or "/bin/sh"}
        )
    for key, val in env.items():
        run_env[str(key)] = "" if val is None else str(val)
    if reset_system_locale:
        for key in _LOCALE_VARS:
            run_env[key] = "C"
    if prepend_path:
        run_env["PATH"] = f"{prepend_path}:{run_env.get('PATH', '')}" if run_env.get("PATH") else str(prepend_path)
    return run_env


def _runas_user(runas: str | None) -> Any:
    if not runas:
        return None
    import pwd

    try:
        pw = pwd.getpwnam(str(runas))
    except KeyError:
        raise CommandExecutionError(f"User '{runas}' is not available") from None
    if pw.pw_uid == os.geteuid():
        return None
    if os.geteuid() != 0:
        raise CommandExecutionError(f"Cannot run as user '{runas}': the minion is not running as root")
    return pw


def _run(
    cmd: Any,
    cwd: str | None = None,
    stdin: str | None = None,
    runas: str | None = None,
    group: str | None = None,
    shell: str | None = None,
    python_shell: bool | None = None,
    env: Any = None,
    clean_env: bool = False,
    prepend_path: str | None = None,
    rstrip: bool = True,
    umask: Any = None,
    output_loglevel: str = "debug",
    hide_output: bool = False,
    timeout: float | None = None,
    reset_system_locale: bool = True,
    ignore_retcode: bool = False,
    success_retcodes: Any = None,
    success_stdout: Any = None,
    success_stderr: Any = None,
    redirect_stderr: bool = False,
    output_encoding: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    if cmd is None or (isinstance(cmd, (str, list, tuple)) and not cmd) or (isinstance(cmd, str) and not cmd.strip()):
        raise SaltInvocationError("No command given: 'cmd' is empty")
    use_shell = _python_shell_default(python_shell, kwargs)
    if kwargs.get("template"):
        log.warning("cmd: the 'template' argument is not supported by briny and was ignored")
    shell = shell or _default_shell()
    if use_shell:
        text = shlex.join(str(c) for c in cmd) if isinstance(cmd, (list, tuple)) else str(cmd)
        argv = [shell, "-c", text]
        shown = text
    else:
        if isinstance(cmd, (list, tuple)):
            argv = [str(c) for c in cmd]
        else:
            try:
                argv = shlex.split(str(cmd))
            except ValueError as exc:
                raise SaltInvocationError(f"Cannot split command {cmd!r}: {exc}") from None
        shown = str(cmd) if isinstance(cmd, str) else shlex.join(argv)
    pw = _runas_user(runas)
    if cwd is None:
        cwd = pw.pw_dir if pw is not None else os.path.expanduser("~")
        if not os.path.isdir(cwd) or not os.access(cwd, os.X_OK):
            cwd = "/"
    else:
        cwd = str(cwd)
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise CommandExecutionError(f"Specified cwd '{cwd}' either not absolute or does not exist")
    mask = -1
    if umask is not None:
        try:
            mask = int(str(umask), 8)
        except ValueError:
            mask = -1
        if mask < 0 or mask > 0o777:
            raise CommandExecutionError(f"Invalid umask: '{umask}'")
    run_env = _env(env, _is_true(clean_env), _is_true(reset_system_locale), prepend_path, pw)
    popen_kwargs: dict[str, Any] = {
        "cwd": cwd,
        "env": run_env,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT if redirect_stderr else subprocess.PIPE,
        "stdin": subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        "close_fds": True,
        "start_new_session": True,
        "umask": mask,
    }
    if pw is not None:
        popen_kwargs["user"] = pw.pw_uid
        popen_kwargs["group"] = pw.pw_gid
        import grp

        popen_kwargs["extra_groups"] = [g.gr_gid for g in grp.getgrall() if pw.pw_name in g.gr_mem]
    if group:
        if os.geteuid() != 0:
            raise CommandExecutionError(f"Cannot run as group '{group}': the minion is not running as root")
        popen_kwargs["group"] = group
    level_name = str(output_loglevel).lower()
    level = None if level_name == "quiet" else LEVELS.get(level_name)
    log.info("Executing command %r in directory %r", _log_name(argv if not use_shell else shown), cwd)
    try:
        proc = subprocess.Popen(argv, **popen_kwargs)
    except (OSError, ValueError, KeyError) as exc:
        raise CommandExecutionError(f"Unable to run command '{shown}': {exc}") from None
    data = stdin.encode() if isinstance(stdin, str) else (stdin if stdin is not None else None)
    timed_out = False
    try:
        out, err = proc.communicate(data, timeout=float(timeout) if timeout else None)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        out, err = proc.communicate()
    encoding = output_encoding or "utf-8"
    ret: dict[str, Any] = {"pid": proc.pid, "retcode": proc.returncode}
    for key, raw in (("stdout", out), ("stderr", err)):
        raw = raw or b""
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            log.error(
                "Failed to decode %s from command %s, non-decodable characters have been replaced",
                key,
                _log_name(shown),
            )
            text = raw.decode(encoding, errors="replace")
        ret[key] = text.rstrip() if rstrip else text
    if timed_out:
        ret["stdout"] = f"{shown} : Timed out after {timeout} seconds"
        ret["stderr"] = ""
        ret["retcode"] = 1
        return ret
    if success_retcodes is not None and ret["retcode"] != 0:
        codes = success_retcodes if isinstance(success_retcodes, (list, tuple)) else [success_retcodes]
        try:
            if ret["retcode"] in [int(c) for c in codes]:
                ret["retcode"] = 0
        except (TypeError, ValueError):
            raise SaltInvocationError(f"success_retcodes must be integers, not {success_retcodes!r}") from None
    for key, ok in (("stdout", success_stdout), ("stderr", success_stderr)):
        if ok is not None and ret["retcode"] != 0:
            oks = ok if isinstance(ok, (list, tuple)) else [ok]
            if ret[key] in [str(o) for o in oks]:
                ret["retcode"] = 0
    if level is not None and not _is_true(hide_output):
        log.log(level, "stdout: %s", ret["stdout"])
    if ret["retcode"] != 0 and not _is_true(ignore_retcode):
        log.error("Command '%s' failed with return code: %s", _log_name(shown), ret["retcode"])
        if not _is_true(hide_output):
            if ret["stdout"]:
                log.error("stdout: %s", ret["stdout"])
            if ret["stderr"]:
                log.error("stderr: %s", ret["stderr"])
    return ret


def _note_retcode(ret: Mapping[str, Any], ignore_retcode: Any) -> None:
    if not _is_true(ignore_retcode):
        __context__["retcode"] = ret["retcode"]


def _raise_on_error(ret: Mapping[str, Any], raise_err: Any, text: str) -> None:
    if _is_true(raise_err) and ret["retcode"] != 0:
        raise CommandExecutionError(text or f"Command failed with return code {ret['retcode']}", info=dict(ret))


def run(
    cmd: Any,
    cwd: str | None = None,
    stdin: str | None = None,
    runas: str | None = None,
    group: str | None = None,
    shell: str | None = None,
    python_shell: bool | None = None,
    env: Any = None,
    clean_env: bool = False,
    template: str | None = None,
    rstrip: bool = True,
    umask: Any = None,
    output_encoding: str | None = None,
    output_loglevel: str = "debug",
    log_callback: Any = None,
    hide_output: bool = False,
    timeout: float | None = None,
    reset_system_locale: bool = True,
    ignore_retcode: bool = False,
    saltenv: str | None = None,
    use_vt: bool = False,
    bg: bool = False,
    password: str | None = None,
    encoded_cmd: bool = False,
    raise_err: bool = False,
    prepend_path: str | None = None,
    success_retcodes: Any = None,
    success_stdout: Any = None,
    success_stderr: Any = None,
    redirect_stderr: bool = True,
    **kwargs: Any,
) -> str:
    """Run ``cmd`` and return its output (stderr merged into stdout by default).

    The positional order of the arguments is Salt's (``cmd, cwd, stdin,
    runas, group, shell, python_shell, env, clean_env, template, rstrip,
    umask, ...``); ``log_callback``, ``use_vt``, ``password`` and
    ``encoded_cmd`` are accepted and ignored (Windows / terminal options).
    """
    if _is_true(bg):
        run_bg(
            cmd,
            cwd=cwd,
            runas=runas,
            shell=shell,
            python_shell=python_shell,
            env=env,
            clean_env=clean_env,
            umask=umask,
            prepend_path=prepend_path,
            **kwargs,
        )
        return ""
    ret = _run(
        cmd,
        cwd=cwd,
        stdin=stdin,
        runas=runas,
        group=group,
        shell=shell,
        python_shell=python_shell,
        env=env,
        clean_env=clean_env,
        template=template,
        rstrip=rstrip,
        umask=umask,
        output_encoding=output_encoding,
        output_loglevel=output_loglevel,
        hide_output=hide_output,
        timeout=timeout,
        reset_system_locale=reset_system_locale,
        ignore_retcode=ignore_retcode,
        prepend_path=prepend_path,
        success_retcodes=success_retcodes,
        success_stdout=success_stdout,
        success_stderr=success_stderr,
        redirect_stderr=_is_true(redirect_stderr),
        **kwargs,
    )
    _note_retcode(ret, ignore_retcode)
    out = ret["stdout"]
    _raise_on_error(ret, raise_err, out)
    return "" if _is_true(hide_output) else out


def shell(cmd: Any, cwd: str | None = None, **kwargs: Any) -> str:
    """Like :func:`run`, always through the shell (``python_shell=True``)."""
    kwargs["python_shell"] = True
    return run(cmd, cwd=cwd, **kwargs)


def _positional(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Bind extra positional arguments to Salt's order after ``cmd``."""
    if len(args) > len(_POSITIONAL):
        raise SaltInvocationError(f"too many positional arguments ({len(args) + 1})")
    for name, value in zip(_POSITIONAL, args):
        if name in kwargs:
            raise SaltInvocationError(f"argument {name!r} given twice")
        kwargs[name] = value
    return kwargs


def run_stdout(cmd: Any, *args: Any, **kwargs: Any) -> str:
    """Run ``cmd`` and return only its stdout (Salt's argument order and names)."""
    kwargs = _positional(args, kwargs)
    kwargs.pop("redirect_stderr", None)
    ignore_retcode = kwargs.pop("ignore_retcode", False)
    raise_err = kwargs.pop("raise_err", False)
    hide_output = kwargs.pop("hide_output", False)
    ret = _run(cmd, ignore_retcode=ignore_retcode, hide_output=hide_output, **kwargs)
    _note_retcode(ret, ignore_retcode)
    _raise_on_error(ret, raise_err, ret["stdout"])
    return "" if _is_true(hide_output) else ret["stdout"]


def run_stderr(cmd: Any, *args: Any, **kwargs: Any) -> str:
    """Run ``cmd`` and return only its stderr (Salt's argument order and names)."""
    kwargs = _positional(args, kwargs)
    kwargs.pop("redirect_stderr", None)
    ignore_retcode = kwargs.pop("ignore_retcode", False)
    raise_err = kwargs.pop("raise_err", False)
    hide_output = kwargs.pop("hide_output", False)
    ret = _run(cmd, ignore_retcode=ignore_retcode, hide_output=hide_output, **kwargs)
    _note_retcode(ret, ignore_retcode)
    _raise_on_error(ret, raise_err, ret["stderr"])
    return "" if _is_true(hide_output) else ret["stderr"]


def run_all(cmd: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """Run ``cmd`` and return ``{"pid", "retcode", "stdout", "stderr"}`` (Salt's argument order)."""
    kwargs = _positional(args, kwargs)
    ignore_retcode = kwargs.pop("ignore_retcode", False)
    raise_err = kwargs.pop("raise_err", False)
    hide_output = kwargs.pop("hide_output", False)
    redirect_stderr = _is_true(kwargs.pop("redirect_stderr", False))
    ret = _run(
        cmd, ignore_retcode=ignore_retcode, redirect_stderr=_is_true(redirect_stderr), hide_output=hide_output, **kwargs
    )
    if redirect_stderr:
        ret["stderr"] = ""
    _note_retcode(ret, ignore_retcode)
    _raise_on_error(ret, raise_err, ret["stderr"] or ret["stdout"])
    if _is_true(hide_output):
        ret["stdout"] = ret["stderr"] = ""
    return ret


def retcode(cmd: Any, *args: Any, **kwargs: Any) -> int:
    """Run ``cmd`` and return its exit status (Salt's argument order and names)."""
    kwargs = _positional(args, kwargs)
    kwargs.pop("redirect_stderr", None)
    ignore_retcode = kwargs.pop("ignore_retcode", False)
    ret = _run(cmd, ignore_retcode=ignore_retcode, redirect_stderr=True, **kwargs)
    _note_retcode(ret, ignore_retcode)
    return int(ret["retcode"])


def run_bg(
    cmd: Any,
    cwd: str | None = None,
    runas: str | None = None,
    shell: str | None = None,
    python_shell: bool | None = None,
    env: Any = None,
    clean_env: bool = False,
    umask: Any = None,
    prepend_path: str | None = None,
    **kwargs: Any,
) -> dict[str, int]:
    """Start ``cmd`` in the background and return ``{"pid": pid}`` without waiting."""
    use_shell = _python_shell_default(python_shell, kwargs)
    if not cmd:
        raise SaltInvocationError("No command given: 'cmd' is empty")
    argv = (
        [shell or _default_shell(), "-c", str(cmd)]
        if use_shell
        else ([str(c) for c in cmd] if isinstance(cmd, (list, tuple)) else shlex.split(str(cmd)))
    )
    pw = _runas_user(runas)
    cwd = cwd or (pw.pw_dir if pw is not None else os.path.expanduser("~"))
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise CommandExecutionError(f"Specified cwd '{cwd}' either not absolute or does not exist")
    extra: dict[str, Any] = {}
    if pw is not None:
        extra = {"user": pw.pw_uid, "group": pw.pw_gid}
    try:
        mask = int(str(umask), 8) if umask is not None else -1
    except ValueError:
        raise CommandExecutionError(f"Invalid umask: '{umask}'") from None
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=_env(env, _is_true(clean_env), True, prepend_path, pw),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            umask=mask,
            **extra,
        )
    except OSError as exc:
        raise CommandExecutionError(f"Unable to run command '{cmd}': {exc}") from None
    return {"pid": proc.pid}


def which(cmd: str, **kwargs: Any) -> str | None:
    """The full path of executable ``cmd`` on the PATH (plus the sbin folders), or None."""
    path = os.environ.get("PATH", os.defpath)
    extra = [
        d
        for d in ("/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/bin", "/bin")
        if d not in path.split(os.pathsep)
    ]
    return shutil.which(str(cmd), path=os.pathsep.join([path] + extra))


def which_bin(cmds: list[str], **kwargs: Any) -> str | None:
    """The path of the first of ``cmds`` found, or None."""
    for cmd in cmds:
        found = which(cmd)
        if found:
            return found
    return None


def has_exec(cmd: str, **kwargs: Any) -> bool:
    """True when ``cmd`` is an executable on the PATH (or an executable path)."""
    return which(cmd) is not None


def shells(**kwargs: Any) -> list[str]:
    """The login shells listed in ``/etc/shells``."""
    try:
        with open("/etc/shells", encoding="utf-8") as fh:
            return [line.strip() for line in fh if line.strip() and not line.startswith("#")]
    except OSError:
        return []


def exec_code(lang: str, code: str, cwd: str | None = None, args: Any = None, **kwargs: Any) -> str:
    """Run ``code`` with the interpreter ``lang`` and return its output."""
    return exec_code_all(lang, code, cwd, args, **kwargs)["stdout"]


def exec_code_all(lang: str, code: str, cwd: str | None = None, args: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Run ``code`` with ``lang`` and return the ``run_all`` dict."""
    import tempfile

    fd, path = tempfile.mkstemp(prefix="briny-code-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(code)
        argv = [lang, path] + (
            [str(a) for a in args] if isinstance(args, list) else shlex.split(str(args)) if args else []
        )
        kwargs["python_shell"] = False
        return run_all(argv, cwd=cwd, **kwargs)
    finally:
        os.unlink(path)
