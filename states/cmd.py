"""The ``cmd`` state module: run commands and scripts as states.

Runs wherever states run (``briny-call``, the minion). Commands run through
the ``cmd`` execution module (``__salt__["cmd.run_all"]``) and scripts are
fetched through ``__salt__["cp.cache_file"]``; nothing here starts a process
itself. ``unless``, ``onlyif`` and the watch machinery are the requisite
engine's; ``creates`` is honoured here too, so a direct call behaves.

Results follow Salt 3007: changes are the run's ``pid``, ``retcode``,
``stdout`` and ``stderr``; the comment is ``Command "x" run`` (scripts:
``Command 'x' run``); test mode reports ``would have been executed``.
``stateful`` commands report their own changes through a last line of
``name=value`` pairs or a JSON document on stdout.

Differences from Salt, on purpose: a stateful command whose only output is
the status line reports ``stdout: ""`` (Salt cuts one character off it).
``cmd.call`` (a pydsl helper) is not provided.
"""

from __future__ import annotations

import inspect
import json
import os
import pwd
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import BrinyError
from briny.common.truth import is_true as _truthy
from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


# run_all keywords a state passes through when given
_PASS_THROUGH = (
    "stdin",
    "shell",
    "umask",
    "timeout",
    "output_loglevel",
    "hide_output",
    "use_vt",
    "prepend_path",
    "group",
    "success_stdout",
    "success_stderr",
    "bg",
    "password",
    "reset_system_locale",
    "clean_env",
)
_PARSE_FAILED = "Failed parsing script output! Stdout must be JSON or a line of name=value pairs."


def _ret(name: str) -> dict[str, Any]:
    return {"name": name, "changes": {}, "result": False, "comment": ""}


def _merge_env(env: Any) -> tuple[dict[str, Any] | None, bool]:
    """``env`` as a dict (a list of one-key dicts is merged); (None, False) when malformed."""
    if env is None or env == "" or env == []:
        return None, True
    if isinstance(env, dict):
        return dict(env), True
    if isinstance(env, list):
        merged: dict[str, Any] = {}
        for item in env:
            if not isinstance(item, dict):
                return None, False
            merged.update(item)
        return merged, True
    return None, False


def _creates_satisfied(creates: Any) -> str | None:
    """The comment to return when every path of ``creates`` exists, else None."""
    if not creates:
        return None
    if isinstance(creates, str):
        return f"{creates} exists" if os.path.exists(creates) else None
    if isinstance(creates, list) and all(os.path.exists(str(p)) for p in creates):
        return "All files in creates exist"
    return None


def _precheck(
    name: str, env: Any, cwd: str | None, runas: str | None, creates: Any
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(early result, merged env): input checks shared by run and script."""
    ret = _ret(name)
    done = _creates_satisfied(creates)
    if done is not None:
        ret.update(result=True, comment=done, skip_watch=True)
        return ret, None
    merged, ok = _merge_env(env)
    if not ok:
        ret["comment"] = "Invalidly-formatted 'env' parameter. See documentation."
        return ret, None
    if _testing():
        return None, merged
    if cwd and not os.path.isdir(str(cwd)):
        ret["comment"] = f'Desired working directory "{cwd}" is not available'
        return ret, None
    if runas:
        try:
            pwd.getpwnam(str(runas))
        except KeyError:
            ret["comment"] = f"User '{runas}' is not available"
            return ret, None
    return None, merged


def _run_all(
    cmd: str,
    cwd: str | None,
    runas: str | None,
    env: dict[str, Any] | None,
    success_retcodes: Any,
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    call: dict[str, Any] = {
        "cwd": cwd,
        "runas": runas,
        "env": env,
        "python_shell": True,
        "success_retcodes": success_retcodes,
    }
    for key in _PASS_THROUGH:
        if kwargs.get(key) not in (None, False) and not (key == "output_loglevel" and kwargs[key] == "debug"):
            call[key] = kwargs[key]
    call = {k: v for k, v in call.items() if v is not None}
    run_all = __salt__["cmd.run_all"]
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(run_all).parameters
    except (TypeError, ValueError):
        params = {}
    if params and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        call = {k: v for k, v in call.items() if k in params}
    result = dict(run_all(cmd, **call))
    retcodes = (
        success_retcodes
        if isinstance(success_retcodes, list)
        else ([success_retcodes] if success_retcodes is not None else [])
    )
    if result.get("retcode") in [int(r) for r in retcodes if str(r).lstrip("-").isdigit()]:
        result["retcode"] = 0
    if _truthy(kwargs.get("hide_output", False)):
        result["stdout"] = ""
        result["stderr"] = ""
    return {
        k: result.get(k, "" if k in ("stdout", "stderr") else 0) for k in ("pid", "retcode", "stdout", "stderr")
    } | {k: v for k, v in result.items() if k not in ("pid", "retcode", "stdout", "stderr")}


def _parse_stateful(stdout: str) -> tuple[dict[str, Any] | None, str]:
    """(data, remaining stdout) from a stateful command's output; data None if unparsable."""
    text = stdout.strip()
    if text:
        try:
            data = json.loads(text)
        except ValueError:
            pass
        else:
            return (data, "") if isinstance(data, dict) else (None, stdout)
    body = stdout.rstrip("\n")
    idx = body.rfind("\n")
    last, rest = (body[idx + 1 :], body[:idx]) if idx != -1 else (body, "")
    try:
        words = shlex.split(last)
    except ValueError:
        return None, stdout
    if not words or any("=" not in w for w in words):
        return None, stdout
    data = {}
    for word in words:
        key, _, value = word.partition("=")
        data[key] = value
    return data, rest


def _reinterpret(ret: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """Turn a stateful command's run into the state result it describes."""
    data, stdout = _parse_stateful(str(run.get("stdout") or ""))
    if data is None:
        ret["changes"] = run
        ret["result"] = False
        ret["comment"] = _PARSE_FAILED
        return ret
    comment = data.pop("comment", "")
    ret["comment"] = "" if comment is None else str(comment)
    ret["result"] = run.get("retcode") == 0
    if _truthy(data.get("changed", False)):
        ret["changes"] = {**data, **run, "stdout": stdout}
    else:
        ret["changes"] = {}
    return ret


def _stateful_test_name(stateful: Any) -> str | None:
    if isinstance(stateful, dict):
        return stateful.get("test_name")
    if isinstance(stateful, list):
        for item in stateful:
            if isinstance(item, dict) and item.get("test_name"):
                return str(item["test_name"])
    return None


def run(
    name: str,
    cwd: str | None = None,
    root: str | None = None,
    runas: str | None = None,
    shell: str | None = None,
    env: Any = None,
    prepend_path: str | None = None,
    stateful: Any = False,
    umask: str | None = None,
    output_loglevel: str = "debug",
    hide_output: bool = False,
    timeout: int | None = None,
    ignore_timeout: bool = False,
    use_vt: bool = False,
    success_retcodes: Any = None,
    success_stdout: Any = None,
    success_stderr: Any = None,
    creates: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run ``name`` through the shell; a non-zero exit fails the state."""
    early, merged = _precheck(name, env, cwd, runas, creates)
    if early is not None:
        return early
    ret = _ret(name)
    test_name = _stateful_test_name(stateful) if stateful else None
    if _testing() and not test_name:
        if stateful:
            ret["result"] = None
            return ret
        ret.update(result=None, changes={"cmd": name}, comment=f'Command "{name}" would have been executed')
        return ret
    extra = dict(
        kwargs,
        shell=shell,
        umask=umask,
        output_loglevel=output_loglevel,
        hide_output=hide_output,
        timeout=timeout,
        use_vt=use_vt,
        prepend_path=prepend_path,
        success_stdout=success_stdout,
        success_stderr=success_stderr,
    )
    command = test_name if (_testing() and test_name) else name
    try:
        result = _run_all(str(command), cwd, runas, merged, success_retcodes, extra)
    except BrinyError as exc:
        ret["comment"] = str(exc)
        return ret
    except OSError as exc:
        ret["comment"] = f'Unable to run command "{name}": {exc.strerror or exc}'
        return ret
    if stateful:
        _reinterpret(ret, result)
        if _testing() and ret["result"] and ret["changes"]:
            ret["result"] = None
        return ret
    ret["changes"] = result
    ret["result"] = result.get("retcode") == 0
    ret["comment"] = f'Command "{name}" run'
    return ret


def wait(name: str, **kwargs: Any) -> dict[str, Any]:
    """Run ``name`` only when a watched state changes (through ``mod_watch``)."""
    return {"name": name, "changes": {}, "result": True, "comment": ""}


watch = wait


def _script_ret(name: str) -> dict[str, Any]:
    return {"name": name, "changes": {}, "result": False, "comment": ""}


def script(
    name: str,
    source: str | None = None,
    template: str | None = None,
    cwd: str | None = None,
    runas: str | None = None,
    shell: str | None = None,
    env: Any = None,
    stateful: Any = False,
    umask: str | None = None,
    timeout: int | None = None,
    use_vt: bool = False,
    output_loglevel: str = "debug",
    hide_output: bool = False,
    defaults: Any = None,
    context: Any = None,
    success_retcodes: Any = None,
    success_stdout: Any = None,
    success_stderr: Any = None,
    args: Any = None,
    creates: Any = None,
    saltenv: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Fetch the script ``source`` (default: ``name``) and run it with ``args``."""
    early, merged = _precheck(name, env, cwd, runas, creates)
    if early is not None:
        return early
    ret = _script_ret(name)
    if context and not isinstance(context, dict):
        ret["comment"] = "Invalidly-formatted 'context' parameter. Must be formed as a dict."
        return ret
    if defaults and not isinstance(defaults, dict):
        ret["comment"] = "Invalidly-formatted 'defaults' parameter. Must be formed as a dict."
        return ret
    if _testing():
        ret.update(result=None, comment=f"Command '{name}' would have been executed")
        return ret
    source = source or name
    env_name = saltenv or kwargs.get("__env__") or globals().get("__env__") or __opts__.get("saltenv") or "base"
    extra = {k: v for k, v in kwargs.items() if not k.startswith("__")}
    extra.update(
        cwd=cwd,
        runas=runas,
        env=merged,
        python_shell=True,
        template=template,
        # as Salt's state: `defaults` with `context` over them, as the template's `context`; the
        # state's other keyword arguments go on to the function, whose template sees them too
        context={**(defaults or {}), **(context or {})},
        shell=shell,
        umask=umask,
        output_loglevel=output_loglevel,
        hide_output=hide_output,
        timeout=timeout,
        use_vt=use_vt,
        success_retcodes=success_retcodes,
        success_stdout=success_stdout,
        success_stderr=success_stderr,
        saltenv=env_name,
    )
    try:
        result = dict(__salt__["cmd.script"](source, args, **{k: v for k, v in extra.items() if v is not None}))
    except BrinyError as exc:
        ret["comment"] = str(exc)
        return ret
    if result.get("cache_error"):
        ret["changes"] = result
        ret["comment"] = f"Unable to cache script {source} from saltenv '{env_name}'"
        return ret
    if stateful:
        return _reinterpret(ret, result)
    ret["changes"] = result
    ret["result"] = result.get("retcode") == 0
    ret["comment"] = f"Command '{name}' run"
    return ret


def wait_script(name: str, **kwargs: Any) -> dict[str, Any]:
    """Run the script only when a watched state changes (through ``mod_watch``)."""
    return {"name": name, "changes": {}, "result": True, "comment": ""}


def mod_watch(name: str, sfun: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """A watched state changed: run the command (``wait``/``run``) or script."""
    args = {k: v for k, v in kwargs.items() if not k.startswith("__") or k == "__env__"}
    if sfun in ("wait", "run", "watch"):
        return run(name, **args)
    if sfun in ("wait_script", "script"):
        return script(name, **args)
    return {
        "name": name,
        "changes": {},
        "result": False,
        "comment": f"cmd.{sfun} does not work with the watch requisite, please use cmd.wait or cmd.wait_script",
    }
