"""The checks before and after a state function runs, as Salt 3007 makes them: ``onlyif``,
``unless`` (commands through ``cmd.retcode``, or function entries with ``get_return``),
``creates``, and ``check_cmd``. A private part of :mod:`briny.common.state.state_call`."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..exceptions import CommandExecutionError
from .requisites import LowChunk
from ..traverse import traverse

if TYPE_CHECKING:
    from .state_call import RunState

__all__ = ["check_creates", "check_onlyif", "check_unless", "run_check_cmd", "run_checks"]

log = logging.getLogger(__name__)

# cmd.run arguments Salt hands to the unless/onlyif commands
_CHECK_CMD_ARGS = ("cwd", "root", "runas", "env", "prepend_path", "umask", "timeout", "success_retcodes")


# --------------------------------------------------------------------------
# unless / onlyif / creates / check_cmd
# --------------------------------------------------------------------------


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _call_check_function(run: RunState, entry: dict[str, Any]) -> Any:
    """The answer of an ``onlyif``/``unless`` function entry (``fun``, ``args``, keyword
    arguments), or the part of it ``get_return`` names."""
    entry = dict(entry)
    fun = entry.pop("fun")
    get_return = entry.pop("get_return", None)
    args = entry.pop("args", [])
    if not isinstance(args, list):
        args = [args]
    result = run.salt[fun](*args, **entry)
    return traverse(result, get_return) if get_return else result


def _cmd_opts(low: LowChunk) -> dict[str, Any]:
    """The ``cmd.retcode`` options of ``onlyif``/``unless`` commands, as Salt's ``_run_check``
    takes them from the state: ``cwd``, ``root``, ``runas``, ``env``, ``prepend_path``, ``umask``,
    ``timeout``, ``success_retcodes`` and ``shell``, less those named in ``cmd_opts_exclude``
    (unset ones are left to ``cmd``'s defaults; ``shell`` defaults to the ``shell`` grain)."""
    exclude = low.get("cmd_opts_exclude") or []
    if not isinstance(exclude, list):
        exclude = [exclude]
    return {k: low[k] for k in (*_CHECK_CMD_ARGS, "shell") if k not in exclude and low.get(k) is not None}


def check_onlyif(run: RunState, low: LowChunk, opts: dict[str, Any]) -> dict[str, Any]:
    """Any false condition skips the state."""
    ret: dict[str, Any] = {"result": False}
    false = {"comment": "onlyif condition is false", "skip_watch": True, "result": True}
    for entry in _as_list(low["onlyif"]):
        if isinstance(entry, str):
            try:
                rc = run.retcode(entry, **opts)
            except CommandExecutionError:
                rc = 100
            if rc != 0:
                ret.update(false)
                return ret
            ret.update({"comment": "onlyif condition is true", "result": False})
        elif isinstance(entry, dict):
            if "fun" not in entry:
                ret["comment"] = f"no `fun` argument in onlyif: {entry}"
                return ret
            result = _call_check_function(run, entry)
            if not result:
                ret.update(false)
                return ret
            ret.update({"comment": "onlyif condition is true", "result": False})
        else:
            ret.update({"comment": "onlyif execution failed, bad type passed", "result": False})
            return ret
    return ret


def check_unless(run: RunState, low: LowChunk, opts: dict[str, Any]) -> dict[str, Any]:
    """The state is skipped only when every condition is true."""
    ret: dict[str, Any] = {"result": False}
    for entry in _as_list(low["unless"]):
        if isinstance(entry, str):
            try:
                true = run.retcode(entry, **opts) == 0
            except CommandExecutionError:
                true = True
        elif isinstance(entry, dict):
            if "fun" not in entry:
                ret["comment"] = f"no `fun` argument in unless: {entry}"
                return ret
            result = _call_check_function(run, entry)
            true = bool(result)
        else:
            ret.update({"comment": "unless execution failed, bad type passed", "result": False})
            return ret
        if not true:
            ret.pop("skip_watch", None)
            ret.update({"comment": "unless condition is false", "result": False})
            return ret
        ret.update({"comment": "unless condition is true", "skip_watch": True, "result": True})
    return ret


def check_creates(low: LowChunk) -> dict[str, Any]:
    creates = low["creates"]
    if isinstance(creates, str) and os.path.exists(creates):
        return {"comment": f"{creates} exists", "result": True, "skip_watch": True}
    if isinstance(creates, list) and all(os.path.exists(p) for p in creates):
        return {"comment": "All files in creates exist", "result": True, "skip_watch": True}
    return {"comment": "Creates files not found", "result": False}


def run_checks(run: RunState, low: LowChunk) -> dict[str, Any]:
    """Salt's ``_run_check``: onlyif, then unless, then creates."""
    ret: dict[str, Any] = {"result": False, "comment": []}
    opts = _cmd_opts(low)
    steps: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ("onlyif", lambda: check_onlyif(run, low, opts)),
        ("unless", lambda: check_unless(run, low, opts)),
        ("creates", lambda: check_creates(low)),
    ]
    for key, step in steps:
        if key not in low:
            continue
        part = step()
        ret["result"] = part["result"] if key == "onlyif" else (part["result"] or ret["result"])
        ret["comment"].append(part.get("comment", ""))
        if "skip_watch" in part:
            ret["skip_watch"] = part["skip_watch"]
    ret["comment"] = "\n".join(c for c in ret["comment"] if c)
    return ret


def run_check_cmd(run: RunState, low: LowChunk) -> dict[str, Any]:
    ret: dict[str, Any] = {"result": False}
    for entry in _as_list(low["check_cmd"]):
        rc = run.retcode(entry)  # as Salt: only the shell (cmd's default, the grain), no runas/env/cwd
        if rc == 0 and ret["result"] is False:
            ret.update({"comment": "check_cmd determined the state succeeded", "result": True})
        elif rc != 0:
            ret.update({"comment": "check_cmd determined the state failed", "result": False})
            return ret
    return ret
