"""Execution module ``grains``: read this host's grains.

Runs wherever ``__salt__`` does: on the minion, in ``briny-call``, and on the
master when it renders a minion's templates (with that minion's cached
grains). Read-only functions of Salt 3007's ``grains`` module, with Salt's
semantics: ``key:sub:0`` paths through dicts and lists, ``default`` when
missing, ``filter_by`` with glob keys, ``default``, ``base`` and ``merge``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common.matchers import filter_by as _filter_by
from briny.common.traverse import DEFAULT_DELIM
from briny.common.traverse import traverse as _traverse

if TYPE_CHECKING:
    from briny.common.dunders import __grains__


log = logging.getLogger(__name__)

_MISSING = object()

_HOST_SANITIZED = {
    "id": "MINION.DOMAINNAME",
    "fqdn": "MINION.DOMAINNAME",
    "domain": "DOMAINNAME",
    "host": "MINION",
    "localhost": "MINION",
    "nodename": "MINION",
}


def _sanitize(key: str, value: Any) -> Any:
    if key in _HOST_SANITIZED:
        return _HOST_SANITIZED[key]
    if key == "serialnumber" and isinstance(value, str):
        keep = int(math.floor(len(value) * 0.75))
        return value[:keep] + "X" * (len(value) - keep)
    return value


def get(key: str, default: Any = "", delimiter: str = DEFAULT_DELIM, ordered: bool = True, **kwargs: Any) -> Any:
    """The grain at ``key`` (``a:b:c`` for nested values), or ``default``."""
    return _traverse(__grains__, key, default, delimiter)


def item(*args: str, **kwargs: Any) -> dict[str, Any]:
    """``{key: value}`` for each grain named; ``default``/``delimiter``/``sanitize`` kwargs."""
    default = kwargs.get("default", "")
    delimiter = kwargs.get("delimiter", DEFAULT_DELIM)
    ret = {arg: _traverse(__grains__, arg, default, delimiter) for arg in args}
    if _is_true(kwargs.get("sanitize")):
        ret = {k: _sanitize(k, v) for k, v in ret.items()}
    return ret


def items(sanitize: bool = False, **kwargs: Any) -> dict[str, Any]:
    """All grains (host names replaced by placeholders with ``sanitize=True``)."""
    grains = dict(__grains__)
    if _is_true(sanitize):
        grains = {k: _sanitize(k, v) for k, v in grains.items()}
    return grains


def ls(**kwargs: Any) -> list[str]:
    """The names of all grains, sorted."""
    return sorted(__grains__)


def has_value(key: str, **kwargs: Any) -> bool:
    """True when the grain ``key`` exists (even if empty or false), as Salt 3007 answers."""
    return _traverse(__grains__, key, _MISSING, kwargs.get("delimiter", DEFAULT_DELIM)) is not _MISSING


def equals(key: str, value: Any, **kwargs: Any) -> bool:
    """True when the grain ``key`` equals ``value``."""
    return bool(_traverse(__grains__, key, _MISSING) == value)


def filter_by(
    lookup_dict: Mapping[Any, Any],
    grain: str = "os_family",
    merge: Any = None,
    default: str = "default",
    base: str | None = None,
    **kwargs: Any,
) -> Any:
    """Pick the entry of ``lookup_dict`` whose key (a glob) matches the grain.

    A list grain matches when any member does. With no match, the ``default``
    key's entry (or None). ``base`` names an entry the result is merged over;
    ``merge`` (a dict) is merged on top of the result.
    """
    return _filter_by(
        lookup_dict,
        grain,
        __grains__,
        merge,
        default,
        base,
        kwargs.get("delimiter", DEFAULT_DELIM),
    )


def _is_true(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "on")
    return bool(value)
