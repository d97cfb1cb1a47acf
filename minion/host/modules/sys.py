"""Execution module ``sys``: what execution and state functions this host offers, and their docs.

Runs wherever ``__salt__`` does. Reads only the loaders (``__salt__``, and
the state loader built from it for the ``state_*`` functions): function
names, module names and docstrings, with Salt 3007's argument forms: a
module name (``test``), a glob (``test.p*``, ``gr*``) or an exact function
(``test.ping``). Docstrings are each function's own ``__doc__`` unchanged,
as Salt returns them; ``state_doc`` adds the state module's docstring under
the module's name, as Salt's does.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import inspect
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


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
    return {name: salt[name].__doc__ for name in _select(_functions(), args)}


def _states() -> Any:
    from briny.common import loader

    return loader.states(__opts__, __salt__)


def list_state_modules(*args: str, **kwargs: Any) -> list[str]:
    """State module names: all, or those matching the globs given."""
    mods = _states().list_modules()
    if not args:
        return list(mods)
    return sorted({m for m in mods for arg in args if fnmatch.fnmatchcase(m, arg)})


def list_state_functions(*args: str, **kwargs: Any) -> list[str]:
    """State function names: all, or those of the state modules / globs named."""
    return _select(sorted(_states()), args)


def state_doc(*args: str, **kwargs: Any) -> dict[str, str | None]:
    """``{state function: docstring}`` for all state functions, or those named (modules, globs,
    functions), with each selected function's module docstring under the module's name."""
    states = _states()
    out: dict[str, str | None] = {}
    for name in _select(sorted(states), args):
        mod = name.partition(".")[0]
        if mod not in out:
            module = states.module(mod)
            out[mod] = module.__doc__ if module is not None else None
        out[name] = states[name].__doc__
    return dict(sorted(out.items()))


def state_argspec(*args: str, **kwargs: Any) -> dict[str, dict[str, Any]]:
    """Each state function's arguments: ``args``, ``defaults``, ``varargs``, ``kwargs``."""
    states = _states()
    return {name: _argspec(states[name]) for name in _select(sorted(states), args)}


def argspec(*args: str, **kwargs: Any) -> dict[str, dict[str, Any]]:
    """Each function's arguments: ``args``, ``defaults``, ``varargs``, ``kwargs``."""
    salt = __salt__
    return {name: _argspec(salt[name]) for name in _select(_functions(), args)}


def _argspec(func: Any) -> dict[str, Any]:
    spec = inspect.getfullargspec(func)
    return {  # Salt's report: None for what is absent, True for *args / **kwargs
        "args": list(spec.args) or None,
        "defaults": list(spec.defaults) if spec.defaults else None,
        "varargs": True if spec.varargs else None,
        "kwargs": True if spec.varkw else None,
    }


def _runner_functions() -> list[str]:
    """The runners ``briny-run`` offers on this host, read from its runner files (their
    ``__all__`` and ``__func_alias__``) without importing them: the master's code is not the
    minion's to load. Empty when the master's package is not installed here."""
    spec = importlib.util.find_spec("briny.master")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    names: list[str] = []
    for folder in folders:
        for path in sorted(Path(folder, "runners").glob("[!_]*.py")):
            names.extend(f"{path.stem}.{fun}" for fun in _exported(path))
    return sorted(set(names))


def _exported(path: Path) -> list[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError) as exc:
        log.warning("cannot read the runner file %s: %s", path, exc)
        return []
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in ("__all__", "__func_alias__"):
                try:
                    found[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    log.warning("the %s of %s is not a literal", node.targets[0].id, path)
    aliases = found.get("__func_alias__") or {}
    return [str(aliases.get(name, name)) for name in found.get("__all__") or []]


def list_runners(*args: str, **kwargs: Any) -> list[str]:
    """Runner module names (``briny-run``'s on this host): all, those named, or those with a
    function matching the globs given (``c*``, ``jobs.l*``)."""
    funcs = _runner_functions()
    mods = sorted({f.partition(".")[0] for f in funcs})
    if not args:
        return mods
    out: set[str] = set()
    for arg in args:
        if "*" in arg:
            out.update(f.partition(".")[0] for f in funcs if fnmatch.fnmatchcase(f, arg))
        elif arg in mods:
            out.add(arg)
    return sorted(out)


def list_runner_functions(*args: str, **kwargs: Any) -> list[str]:
    """Runner function names (``briny-run``'s on this host): all, or those of the modules / globs /
    functions named."""
    return _select(_runner_functions(), args)


def reload_modules(**kwargs: Any) -> bool:
    """Forget loaded modules so they are read again on next use."""
    reload = getattr(__salt__, "reload", None)
    if callable(reload):
        reload()
    return True
