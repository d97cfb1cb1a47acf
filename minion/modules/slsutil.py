"""Execution module ``slsutil``: helpers for SLS and map files.

Runs wherever ``__salt__`` does (minion, ``briny-call``, master-side
rendering). Salt 3007's merge functions, with its strategies:

- ``recurse``: nested dicts are merged key by key; lists are replaced, or
  concatenated without duplicates with ``merge_lists=True``.
- ``overwrite``: top-level keys of the second replace those of the first.
- ``list``: keys present in both become ``[first, second]``; keys only in the
  second are dropped (Salt's behaviour).
- ``aggregate``: without YAMLEX aggregation markers (briny has no ``yamlex``
  renderer) this is a top-level update, as Salt does for unmarked data.
- ``smart``: ``aggregate`` when the ``renderer`` option is ``yamlex``,
  else ``recurse``.

``file_exists`` / ``dir_exists`` / ``path_exists`` ask the file server
through ``cp.list_master`` / ``cp.list_master_dirs``.
"""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common.dictupdate import update as _update
from briny.common.exceptions import CommandExecutionError, SaltInvocationError

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


log = logging.getLogger(__name__)

_STRATEGIES = ("smart", "recurse", "aggregate", "overwrite", "list")


def _check_dicts(obj_a: Any, obj_b: Any) -> None:
    if not isinstance(obj_a, Mapping) or not isinstance(obj_b, Mapping):
        raise SaltInvocationError(
            "Cannot merge non-dict types: got {} and {}".format(type(obj_a).__name__, type(obj_b).__name__)
        )


def update(
    dest: Mapping[Any, Any],
    upd: Mapping[Any, Any],
    recursive_update: bool = True,
    merge_lists: bool = False,
    **kwargs: Any,
) -> dict[Any, Any]:
    """``dest`` updated with ``upd`` (recursively by default); returns the result."""
    _check_dicts(dest, upd)
    result = copy.deepcopy(dict(dest))
    if not recursive_update:
        result.update(copy.deepcopy(dict(upd)))
        return result
    return _update(result, upd, merge_lists)


def merge(
    obj_a: Mapping[Any, Any],
    obj_b: Mapping[Any, Any],
    strategy: str = "smart",
    renderer: str = "yaml",
    merge_lists: bool = False,
    **kwargs: Any,
) -> dict[Any, Any]:
    """``obj_b`` merged into ``obj_a`` with ``strategy`` (see the module docstring)."""
    _check_dicts(obj_a, obj_b)
    if strategy not in _STRATEGIES:
        log.warning("Unknown merging strategy '%s', fallback to recurse", strategy)
        strategy = "recurse"
    if strategy == "smart":
        rend = renderer or __opts__.get("renderer", "yaml")
        strategy = "aggregate" if str(rend).split("|")[-1] == "yamlex" else "recurse"
    a = copy.deepcopy(dict(obj_a))
    b = copy.deepcopy(dict(obj_b))
    if strategy == "recurse":
        return _update(a, b, merge_lists)
    if strategy == "overwrite":
        a.update(b)
        return a
    if strategy == "aggregate":
        a.update(b)
        return a
    # list
    return {key: ([val, b[key]] if key in b else val) for key, val in a.items()}


def merge_all(
    lst: list[Mapping[Any, Any]],
    strategy: str = "smart",
    renderer: str = "yaml",
    merge_lists: bool = False,
    **kwargs: Any,
) -> dict[Any, Any]:
    """Merge each dict of ``lst`` in turn into an empty dict."""
    if not isinstance(lst, list):
        raise SaltInvocationError(f"merge_all needs a list of dicts, not {type(lst).__name__}")
    ret: dict[Any, Any] = {}
    for obj in lst:
        ret = merge(ret, obj, strategy, renderer, merge_lists)
    return ret


def boolstr(value: Any, true: Any = "true", false: Any = "false", **kwargs: Any) -> Any:
    """``true`` when ``value`` is truthy, else ``false`` (for writing config files)."""
    return true if value else false


def _list_master(saltenv: str, dirs: bool) -> list[str]:
    fun = "cp.list_master_dirs" if dirs else "cp.list_master"
    try:
        lister = __salt__[fun]
    except KeyError as exc:
        raise CommandExecutionError(f"{fun} is not available, cannot check the file server") from exc
    return list(lister(saltenv=saltenv))


def _norm(path: str) -> str:
    if path.startswith("salt://"):
        path = path[len("salt://") :]
    return os.path.normpath(path).lstrip("/")


def file_exists(path: str, saltenv: str = "base", **kwargs: Any) -> bool:
    """True when ``path`` is a file on the file server."""
    return _norm(path) in _list_master(saltenv, dirs=False)


def dir_exists(path: str, saltenv: str = "base", **kwargs: Any) -> bool:
    """True when ``path`` is a directory on the file server."""
    return _norm(path) in _list_master(saltenv, dirs=True)


def path_exists(path: str, saltenv: str = "base", **kwargs: Any) -> bool:
    """True when ``path`` is a file or a directory on the file server."""
    return file_exists(path, saltenv) or dir_exists(path, saltenv)


def findup(startpath: str, filenames: str | list[str], saltenv: str = "base", **kwargs: Any) -> str | None:
    """The first of ``filenames`` found in ``startpath`` or a parent folder on the file server."""
    names = [filenames] if isinstance(filenames, str) else list(filenames)
    files = set(_list_master(saltenv, dirs=False))
    start = _norm(startpath) if startpath else ""
    if start in files:
        start = os.path.dirname(start)
    while True:
        for name in names:
            candidate = os.path.join(start, name) if start else name
            if candidate in files:
                return candidate
        if not start:
            return None
        start = os.path.dirname(start)
