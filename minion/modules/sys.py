"""Execution module ``sys``: what functions this loader offers, and their docs.

Runs wherever ``__salt__`` does. Reads only the loader (``__salt__``):
function names, module names and docstrings, with Salt 3007's argument
forms: a module name (``test``), a glob (``test.p*``, ``gr*``) or an
exact function (``test.ping``).
"""

from __future__ import annotations

import fnmatch
import inspect
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

__virtualname__ = "sys"


def _functions() -> list[str]:
    return sorted(__salt__)


def _select(funcs: list[str], args: tuple[str, ...]) -> list[str]:
    if not args:
        return list(funcs)
    out: list[str] = []
    for arg in args:
        if "*" in arg or "?" in arg or "[" in arg:
            out.extend(f for f in funcs if fnmatch.fnmatchcase(f, arg))
        elif arg in funcs:
            out.append(arg)
        else:
            prefix = arg.rstrip(".") + "."
            out.extend(f for f in funcs if f.startswith(prefix))
    return sorted(set(out))


def list_functions(*args: str, **kwargs: Any) -> list[str]:
    """Function names: all, or those of the modules / globs named."""
    funcs = _functions()
    if not args:
        return funcs
    out: list[str] = []
    for arg in args:
        if "*" in arg:
            out.extend(f for f in funcs if fnmatch.fnmatchcase(f, arg))
        else:
            prefix = arg + "."
            out.extend(f for f in funcs if f.startswith(prefix))
    return sorted(set(out))


def list_modules(*args: str, **kwargs: Any) -> list[str]:
    """Module names: all, or those matching the globs given."""
    mods = sorted({f.partition(".")[0] for f in _functions()})
    if not args:
        return mods
    return sorted({m for m in mods for arg in args if fnmatch.fnmatchcase(m, arg)})


def doc(*args: str, **kwargs: Any) -> dict[str, str | None]:
    """``{function: docstring}`` for all functions, or those named (modules, globs, functions)."""
    salt = __salt__
    return {name: inspect.getdoc(salt[name]) for name in _select(_functions(), args)}


def argspec(*args: str, **kwargs: Any) -> dict[str, dict[str, Any]]:
    """Each function's arguments: ``args``, ``defaults``, ``varargs``, ``kwargs``."""
    salt = __salt__
    ret: dict[str, dict[str, Any]] = {}
    for name in _select(_functions(), args):
        spec = inspect.getfullargspec(salt[name])
        ret[name] = {
            "args": spec.args,
            "defaults": list(spec.defaults) if spec.defaults else None,
            "varargs": spec.varargs,
            "kwargs": spec.varkw,
        }
    return ret


def reload_modules(**kwargs: Any) -> bool:
    """Forget loaded modules so they are read again on next use."""
    reload = getattr(__salt__, "reload", None)
    if callable(reload):
        reload()
    return True
