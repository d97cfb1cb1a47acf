"""Execution module ``pillar``: read this minion's pillar.

Runs wherever ``__salt__`` does: on the minion, in ``briny-call``, and on the
master while rendering a minion's templates (with that minion's pillar). The
pillar is the ``__pillar__`` the loader was given; this module never
compiles pillar itself (the master's pillar code does that). Semantics are
Salt 3007's ``pillar.get`` / ``item`` / ``items`` / ``raw`` / ``keys`` /
``ls`` / ``obfuscate`` / ``filter_by``, with ``fetch`` an alias of ``get``.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common.dictupdate import update as _update
from briny.common.matchers import filter_by as _filter_by
from briny.common.traverse import DEFAULT_DELIM
from briny.common.traverse import traverse as _traverse

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __pillar__


log = logging.getLogger(__name__)

_MISSING = object()


def _pillar() -> Mapping[str, Any]:
    return __pillar__


def get(
    key: str,
    default: Any = "",
    merge: bool = False,
    merge_nested_lists: bool | None = None,
    delimiter: str = DEFAULT_DELIM,
    pillarenv: str | None = None,
    saltenv: str | None = None,
    **kwargs: Any,
) -> Any:
    """The pillar value at ``key`` (``a:b:c`` for nested values), or ``default``.

    With ``merge=True`` and a dict (list) ``default``, the pillar value is
    merged over (appended to) the default; a type mismatch logs an error and
    returns the plain value, as Salt does. With ``pillar_raise_on_missing``
    set and no default, a missing key raises ``KeyError``.
    """
    opts = __opts__
    if default == "" and opts.get("pillar_raise_on_missing"):
        default = KeyError
    if merge_nested_lists is None:
        merge_nested_lists = bool(opts.get("pillar_merge_lists", False))
    data = _pillar()
    if merge:
        if isinstance(default, dict):
            ret = _traverse(data, key, {}, delimiter)
            if isinstance(ret, Mapping):
                return _update(copy.deepcopy(default), ret, merge_lists=merge_nested_lists)
            log.error(
                "pillar.get: Default (%s) is a dict, but the returned pillar value (%s) is of "
                "type '%s'. Merge will be skipped.",
                default,
                ret,
                type(ret).__name__,
            )
        elif isinstance(default, list):
            ret = _traverse(data, key, [], delimiter)
            if isinstance(ret, list):
                merged = copy.deepcopy(default)
                merged.extend(x for x in ret if x not in merged)
                return merged
            log.error(
                "pillar.get: Default (%s) is a list, but the returned pillar value (%s) is of "
                "type '%s'. Merge will be skipped.",
                default,
                ret,
                type(ret).__name__,
            )
        else:
            log.error(
                "pillar.get: Default (%s) is of type '%s', must be a dict or list to merge. Merge will be skipped.",
                default,
                type(default).__name__,
            )
    ret = _traverse(data, key, default, delimiter)
    if ret is KeyError:
        raise KeyError(f"Pillar key not found: {key}")
    return ret


fetch = get


def item(*args: str, **kwargs: Any) -> dict[str, Any]:
    """``{key: value}`` for each key named (``default`` and ``delimiter`` kwargs)."""
    default = kwargs.get("default", "")
    delimiter = kwargs.get("delimiter", DEFAULT_DELIM)
    return {arg: _traverse(_pillar(), arg, default, delimiter) for arg in args}


def items(*args: str, **kwargs: Any) -> dict[str, Any]:
    """The whole pillar, or with arguments the same as :func:`item`."""
    if args:
        return item(*args, **kwargs)
    return dict(_pillar())


data = items


def raw(key: str | None = None, **kwargs: Any) -> Any:
    """The pillar as loaded (or the top-level ``key`` of it, ``{}`` when missing)."""
    if key:
        return _pillar().get(key, {})
    return dict(_pillar())


def keys(key: str, delimiter: str = DEFAULT_DELIM, **kwargs: Any) -> list[str]:
    """The keys of the dict at ``key``.

    Raises ``KeyError`` when the key is missing and ``ValueError`` when its
    value is not a dict, as Salt does.
    """
    ret = _traverse(_pillar(), key, KeyError, delimiter)
    if ret is KeyError:
        raise KeyError(f"Pillar key not found: {key}")
    if not isinstance(ret, Mapping):
        raise ValueError(f"Pillar value in key {key} is not a dict")
    return list(ret)


def ls(*args: str, **kwargs: Any) -> list[str]:
    """The top-level pillar keys."""
    return list(items(*args, **kwargs))


def _obfuscate(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _obfuscate(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_obfuscate(v) for v in value]
    return f"<{type(value).__name__}>"


def obfuscate(*args: str, **kwargs: Any) -> dict[str, Any]:
    """The pillar (or the keys named) with every leaf replaced by ``<type>``."""
    return _obfuscate(items(*args, **kwargs))


def file_exists(path: str, saltenv: str | None = None, **kwargs: Any) -> bool:
    """Whether ``path`` is a file of the pillar roots (only with local pillar roots)."""
    import os

    roots = __opts__.get("pillar_roots", {}) or {}
    envs = [saltenv] if saltenv else list(roots)
    for env in envs:
        for root in roots.get(env, []):
            full = os.path.realpath(os.path.join(root, path.lstrip("/")))
            if full.startswith(os.path.realpath(root) + os.sep) and os.path.isfile(full):
                return True
    return False


def filter_by(
    lookup_dict: Mapping[Any, Any],
    pillar: str,
    merge: Any = None,
    default: str = "default",
    base: str | None = None,
    **kwargs: Any,
) -> Any:
    """Like ``grains.filter_by``, keyed on the pillar value at ``pillar``."""
    return _filter_by(lookup_dict, pillar, _pillar(), merge, default, base, kwargs.get("delimiter", DEFAULT_DELIM))
