"""Execution module ``pillar``: read this minion's pillar.

Runs wherever ``__salt__`` does: on the minion, in ``briny-call``, and on the
master while rendering a minion's templates (with that minion's pillar).

As Salt 3007's, two kinds of function:

- ``items`` (and ``data``, ``ls``, ``obfuscate``, which call it) without key
  arguments compiles a fresh pillar each call (``__job__.fresh_pillar``: asked
  of the master, or rendered from the ``pillar_roots`` masterless), so a pillar
  edit shows at once; ``pillar=`` is an override merged over it (masterless:
  rendered in), ``pillarenv``/``saltenv`` choose the environment;
- ``get``/``fetch``, ``item`` (and ``items`` with keys), ``raw``, ``keys`` and
  ``filter_by`` read the minion's in-memory pillar (``__pillar__``, kept until
  ``saltutil.refresh_pillar``); ``get`` and ``item`` compile afresh only when
  given ``pillarenv`` or ``saltenv``.

On the master (rendering a minion's templates) there is nothing fresher than
the pillar just compiled for that render: every function reads it.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common.dictupdate import update as _update
from briny.common.exceptions import SaltInvocationError
from briny.common.matchers import filter_by as _filter_by
from briny.common.traverse import DEFAULT_DELIM
from briny.common.traverse import traverse as _traverse

if TYPE_CHECKING:
    from briny.common.dunders import __job__, __opts__, __pillar__


log = logging.getLogger(__name__)

_MISSING = object()


def _pillar() -> Mapping[str, Any]:
    return __pillar__


def _fresh(
    override: Any = None, pillar_enc: Any = None, pillarenv: str | None = None, saltenv: str | None = None
) -> dict[str, Any]:
    """A pillar compiled now (Salt's ``pillar.items``), with ``override`` merged in."""
    if pillar_enc:
        raise SaltInvocationError("pillar_enc is not supported by briny (no GPG-encrypted pillar)")
    if override is not None and not isinstance(override, dict):
        raise SaltInvocationError("Pillar data must be formatted as a dictionary, unless pillar_enc is specified.")
    if pillarenv is None and __opts__.get("pillarenv_from_saltenv"):
        pillarenv = saltenv or __opts__.get("saltenv")
    fresh = __job__.fresh_pillar
    if callable(fresh):
        return fresh(override or None, pillarenv)
    pillar = dict(__pillar__)  # the master's render: its pillar was compiled for it
    if not override:
        return pillar
    from briny.common.pillar import with_override  # Jinja and the compiler: only now

    return with_override(pillar, override)


def _source(pillarenv: str | None, saltenv: str | None) -> Mapping[str, Any]:
    """The in-memory pillar, or a fresh one when an environment is named (as Salt's)."""
    if pillarenv is None and saltenv is None:
        return _pillar()
    return _fresh(pillarenv=pillarenv, saltenv=saltenv)


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
    data = _source(pillarenv, saltenv)
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


def item(
    *args: str,
    default: Any = None,
    delimiter: str | None = None,
    pillarenv: str | None = None,
    saltenv: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """``{key: value}`` for each key named, from the in-memory pillar (a fresh one when
    ``pillarenv`` or ``saltenv`` is given)."""
    if default is None:
        default = ""
    data = _source(pillarenv, saltenv)
    return {arg: _traverse(data, arg, default, delimiter or DEFAULT_DELIM) for arg in args}


def items(
    *args: str,
    pillar: Any = None,
    pillar_enc: Any = None,
    pillarenv: str | None = None,
    saltenv: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The whole pillar compiled afresh (``pillar=`` an override of it); with key arguments
    the same as :func:`item` (the in-memory pillar)."""
    if args:
        return item(*args, pillarenv=pillarenv, saltenv=saltenv)
    return _fresh(pillar, pillar_enc, pillarenv, saltenv)


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
