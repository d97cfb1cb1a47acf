"""The ``module`` state module: call execution functions as states.

Runs wherever states run; the functions are reached through ``__salt__``.
Two syntaxes, chosen per state exactly as Salt 3007 chooses by default:

- the *new* form, ``- mod.fun: [args]`` (items that are dicts are keyword
  arguments; a keyword naming a positional parameter fills that position),
  several functions per state; the result's ``name`` is the list of
  functions, ``changes`` maps each successful function to its return and the
  comment is ``mod.fun: <return>`` (``: <comment>`` / ``: Success`` for a
  dict), failures as ``'mod.fun' failed: ...`` / ``'mod.fun': False``;
- the *legacy* form, ``- name: mod.fun`` plus the function's arguments as
  keywords (``m_name``, ``m_fun``, ``m_names``, ``m_state``, ``m_saltenv``
  for arguments whose names the state system takes; ``kwargs: {...}`` for a
  function's ``**kwargs``, a list under the ``*args`` name): changes
  ``{"ret": <return>}``, comment ``Module function mod.fun executed``.

The legacy form is used when any argument other than ``name`` has no dot in
its name, or when only ``name`` is given; otherwise the new form. The result
is False when the return is False, or a dict holding ``result: False`` or a
non-zero ``retcode`` (at any depth). ``module.wait`` does nothing until a
``watch`` fires ``mod_watch``, which runs the call.

Differences from Salt, on purpose: test-mode comments say ``Functions a, b
to be executed.`` and ``Unavailable functions: a, b.`` (Salt prints
``FunctionTrue`` / ``functionTrue``); an exception raised by a function in
the new form fails that function with ``'mod.fun' failed: <message>``
(Salt's state crashes with a traceback); ``sfun`` and ``__reqs__`` do not
leak into the ``name`` list of a ``mod_watch`` call; ``returner`` is
accepted and ignored, named in the result's ``warnings`` (briny has no returners yet).
"""

from __future__ import annotations

import inspect
import logging
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import SaltInvocationError
from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

_IGNORED = ("name", "__reqs__", "sfun")
_RENAMED = {"name": "m_name", "fun": "m_fun", "names": "m_names", "state": "m_state", "saltenv": "m_saltenv"}


def _salt() -> Any:
    return __salt__


def _succeeded(value: Any) -> bool:
    """False for False, or for a dict (at any depth) with ``result: False`` or a non-zero ``retcode``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, dict):
        for key, val in value.items():
            if (key == "result" and val is False) or (key == "retcode" and val != 0):
                return False
            if isinstance(val, dict) and not _succeeded(val):
                return False
    return True


def _params(func: Any) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return []


def _call_new(func: Any, items: Any) -> Any:
    """Call ``func`` with a new-form argument list."""
    if items is None:
        items = []
    if not isinstance(items, list):
        items = [items]
    params = _params(func)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p.name for p in positional if p.default is p.empty]
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    by_position: dict[str, Any] = {}
    for item in items:
        if isinstance(item, dict):
            for key, val in item.items():
                if key in required:
                    by_position[key] = val
                else:
                    kwargs[key] = val
        else:
            args.append(item)
    for pname in required:
        if pname in by_position:
            args.append(by_position[pname])
    given = len(args)
    missing = []
    for p in positional[given : len(required)] if given < len(required) else []:
        if p.name in kwargs:
            given += 1
        else:
            missing.append(p.name)
    if missing:
        raise SaltInvocationError("Missing arguments: " + ", ".join(missing))
    if given < len(required):
        raise SaltInvocationError(f"Function expects {len(required)} positional parameters, got only {given}")
    return func(*args, **kwargs)


def _new_run(name: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    functions = [k for k in kwargs if k not in _IGNORED and "." in k]
    ret: dict[str, Any] = {"name": functions, "changes": {}, "comment": "", "result": None}
    if not functions:
        ret.update(comment="No function provided.", result=False)
        return ret
    missing, planned = [], []
    for key in functions:
        fun = key.split(":")[0]
        if fun not in _salt():
            missing.append(fun)
        elif _testing():
            planned.append(fun)
    if missing or planned:
        parts = []
        if missing:
            parts.append(f"Unavailable function{'s' if len(missing) > 1 else ''}: {', '.join(missing)}.")
        if planned:
            parts.append(f"Function{'s' if len(planned) > 1 else ''} {', '.join(planned)} to be executed.")
        ret["comment"] = " ".join(parts)
        if missing:
            ret["result"] = False
        return ret
    _no_returner(ret, kwargs)
    failures, successes = [], []
    for key in functions:
        fun = key.split(":")[0]
        try:
            value = _call_new(_salt()[fun], kwargs.get(key))
        except Exception as exc:  # noqa: BLE001 - a failing function fails its entry, never the run
            failures.append(f"'{key}' failed: {exc}")
            continue
        if _succeeded(value):
            shown = value.get("comment", "Success") if isinstance(value, dict) else value
            successes.append(f"{key}: {shown}")
            ret["changes"][key] = value
        elif isinstance(value, dict):
            failures.append(f"'{key}' failed: {value.get('comment', '(error message N/A)')}")
        elif value is False:
            failures.append(f"'{key}': {value}")
    ret["comment"] = ", ".join(failures + successes)
    ret["result"] = not failures
    return ret


def _legacy_args(func: Any, kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any], str | None]:
    """(args, kwargs, error) for a legacy call: parameters read from the state's keywords."""
    args: list[Any] = []
    missing: list[str] = []
    var_args = var_kw = None
    for p in _params(func):
        if p.kind is p.VAR_POSITIONAL:
            var_args = p.name
            continue
        if p.kind is p.VAR_KEYWORD:
            var_kw = p.name
            continue
        if p.kind is p.KEYWORD_ONLY:
            continue
        alias = _RENAMED.get(p.name, p.name)
        if p.default is not p.empty:
            if p.name in kwargs:
                args.append(kwargs[p.name])
            elif alias in kwargs:
                args.append(kwargs[alias])
            else:
                args.append(p.default)
        elif alias in kwargs:
            args.append(kwargs[alias])
        else:
            missing.append(alias)
    if missing:
        return [], {}, "The following arguments are missing: " + " ".join(missing)
    if var_args is not None:
        key = _RENAMED.get(var_args, var_args)
        if key in kwargs:
            if not isinstance(kwargs[key], list):
                return [], {}, f"'{var_args}' must be a list."
            args.extend(kwargs[key])
    extra: dict[str, Any] = {}
    if var_kw is not None and var_kw in kwargs:
        if not isinstance(kwargs[var_kw], dict):
            return [], {}, f"'{var_kw}' must be a dict."
        extra = dict(kwargs[var_kw])
    return args, extra, None


def _no_returner(ret: dict[str, Any], kwargs: dict[str, Any]) -> None:
    """``returner``: named in the result's ``warnings`` (the highstate output shows them) and the
    log, never dropped unseen: briny has no returners, the return stays in the job's result."""
    if kwargs.get("returner"):
        why = f"'returner' was ignored: returners are not supported by briny ({kwargs['returner']!r} is not called)"
        log.warning("module.run: %s", why)
        ret.setdefault("warnings", []).append(why)


def _legacy_run(name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    ret: dict[str, Any] = {"name": name, "changes": {}, "comment": "", "result": None}
    if name not in _salt():
        ret.update(comment=f"Module function {name} is not available", result=False)
        return ret
    if _testing():
        ret["comment"] = f"Module function {name} is set to execute"
        return ret
    func = _salt()[name]
    args, extra, error = _legacy_args(func, kwargs)
    if error:
        ret.update(comment=error, result=False)
        return ret
    _no_returner(ret, kwargs)
    try:
        value = func(*args, **extra)
    except Exception as exc:  # noqa: BLE001 - the function's failure is the state's result
        ret.update(comment=f"Module function {name} threw an exception. Exception: {exc}", result=False)
        return ret
    ret["changes"]["ret"] = value
    ret["comment"] = f"Module function {name} executed"
    ret["result"] = _succeeded(value)
    return ret


def run(**kwargs: Any) -> dict[str, Any]:
    """Call one function (legacy ``- name: mod.fun``) or several (``- mod.fun: [args]``)."""
    keys = [k for k in kwargs if k not in _IGNORED]
    legacy = any("." not in k for k in keys) or (not keys and bool(kwargs))
    if legacy:
        log.debug("module.run: legacy syntax")
        name = kwargs.pop("name", None)
        for key in ("__reqs__", "sfun"):
            kwargs.pop(key, None)
        if name is None:
            return {
                "name": None,
                "changes": {},
                "result": False,
                "comment": "module.run: no function given (name: mod.fun, or - mod.fun: [args])",
            }
        return _legacy_run(str(name), kwargs)
    return _new_run(kwargs.get("name"), kwargs)


def wait(name: str, **kwargs: Any) -> dict[str, Any]:
    """Do nothing now; the call happens when a ``watch`` requisite fires ``mod_watch``."""
    return {"name": name, "changes": {}, "result": True, "comment": ""}


def mod_watch(**kwargs: Any) -> dict[str, Any]:
    """Run the call of a ``module.wait`` / ``module.run`` whose watched state changed."""
    return run(**kwargs)


watch = wait
