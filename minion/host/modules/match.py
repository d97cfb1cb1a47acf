"""Execution module ``match``: does this minion match a target?

Runs wherever ``__salt__`` does (minion, ``briny-call``, master-side
rendering for a minion). Each function wraps :mod:`briny.common.matchers`
with this minion's id (``__opts__["id"]``, or ``minion_id=``), grains and
pillar. As in Salt, a malformed expression (bad compound, bad regex, bad
CIDR, unknown nodegroup) is logged and answers False here; the pure
matchers raise instead, for the top-file compiler and the master.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from briny.common import matchers
from briny.common.dictupdate import update as _update
from briny.common.exceptions import SaltInvocationError
from briny.common.traverse import DEFAULT_DELIM

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __opts__, __pillar__


log = logging.getLogger(__name__)


def _id(minion_id: str | None) -> str:
    return str(minion_id if minion_id is not None else __opts__.get("id", ""))


def _safe(call: Callable[[], bool]) -> bool:
    try:
        return bool(call())
    except SaltInvocationError as exc:
        log.error("%s", exc)
        return False


def _opt_delim(delimiter: str | None) -> str:
    return delimiter or DEFAULT_DELIM


def compound(tgt: str, minion_id: str | None = None, **kwargs: Any) -> bool:
    """Compound target (``G@os:Debian and web*``, ``not``, ``or``, parentheses, ``N@group``)."""
    # the config's nodegroups only when the target names one (on the master each opts read counts)
    nodegroups = (__opts__.get("nodegroups") or {}) if "N@" in str(tgt) else {}
    return _safe(
        lambda: matchers.compound_match(
            tgt,
            _id(minion_id),
            __grains__,
            __pillar__,
            nodegroups,
        )
    )


def glob(tgt: str, minion_id: str | None = None, **kwargs: Any) -> bool:
    """Glob on the minion id."""
    return _safe(lambda: matchers.glob_match(tgt, _id(minion_id)))


def pcre(tgt: str, minion_id: str | None = None, **kwargs: Any) -> bool:
    """Regular expression on the minion id (anchored at the start)."""
    return _safe(lambda: matchers.pcre_match(tgt, _id(minion_id)))


def list_(tgt: str | list[str], minion_id: str | None = None, **kwargs: Any) -> bool:
    """The minion id is in a comma-separated list."""
    return _safe(lambda: matchers.list_match(tgt, _id(minion_id)))


def grain(tgt: str, delimiter: str = DEFAULT_DELIM, **kwargs: Any) -> bool:
    """``key:glob`` on grains."""
    return _safe(lambda: matchers.grain_match(tgt, __grains__, _opt_delim(delimiter)))


def grain_pcre(tgt: str, delimiter: str = DEFAULT_DELIM, **kwargs: Any) -> bool:
    """``key:regex`` on grains."""
    return _safe(lambda: matchers.grain_pcre_match(tgt, __grains__, _opt_delim(delimiter)))


def pillar(tgt: str, delimiter: str = DEFAULT_DELIM, **kwargs: Any) -> bool:
    """``key:glob`` on pillar."""
    return _safe(lambda: matchers.pillar_match(tgt, __pillar__, _opt_delim(delimiter)))


def pillar_pcre(tgt: str, delimiter: str = DEFAULT_DELIM, **kwargs: Any) -> bool:
    """``key:regex`` on pillar."""
    return _safe(lambda: matchers.pillar_pcre_match(tgt, __pillar__, _opt_delim(delimiter)))


def pillar_exact(tgt: str, delimiter: str = DEFAULT_DELIM, **kwargs: Any) -> bool:
    """``key:value`` exact (case-insensitive) on pillar."""
    return _safe(lambda: matchers.pillar_exact_match(tgt, __pillar__, _opt_delim(delimiter)))


def ipcidr(tgt: str, **kwargs: Any) -> bool:
    """An address or network against this minion's ``ipv4``/``ipv6`` grains."""
    return _safe(lambda: matchers.ipcidr_match(tgt, __grains__))


def nodegroup(tgt: str, **kwargs: Any) -> bool:
    """Membership of the nodegroup ``tgt`` (from ``nodegroups`` in the config)."""
    return compound(f"N@{tgt}")


def data(tgt: str, **kwargs: Any) -> bool:
    """Not supported: briny keeps no minion data store for matching."""
    log.error("match.data is not supported by briny")
    return False


def ifelse(*args: Any, default: Any = None, **kwargs: Any) -> Any:
    """``ifelse(tgt1, value1, tgt2, value2, ...)``: the value of the first compound target that matches."""
    for pos in range(0, len(args) - 1, 2):
        if compound(args[pos], **kwargs):
            return args[pos + 1]
    return default


def search_by(lookup: Mapping[str, Any], tgt_type: str = "compound", minion_id: str | None = None) -> list[Any]:
    """Every entry of ``lookup`` (``{name: [targets]}``) with a target this minion matches."""
    funcs = _funcs()
    if tgt_type not in funcs:
        raise SaltInvocationError(f"Unknown target type {tgt_type!r}")
    found = []
    for key, targets in lookup.items():
        for tgt in targets if isinstance(targets, list) else [targets]:
            if funcs[tgt_type](tgt, minion_id=minion_id) if tgt_type in _ID_TYPES else funcs[tgt_type](tgt):
                found.append(key)
                break
    return found


_ID_TYPES = ("compound", "glob", "pcre", "list")


def _funcs() -> dict[str, Callable[..., bool]]:
    return {
        "compound": compound,
        "glob": glob,
        "pcre": pcre,
        "list": list_,
        "grain": grain,
        "grain_pcre": grain_pcre,
        "pillar": pillar,
        "pillar_pcre": pillar_pcre,
        "pillar_exact": pillar_exact,
        "ipcidr": ipcidr,
        "nodegroup": nodegroup,
    }


def filter_by(
    lookup: Mapping[str, Any],
    tgt_type: str = "compound",
    minion_id: str | None = None,
    merge: Mapping[str, Any] | None = None,
    merge_lists: bool = False,
    default: str = "default",
    **kwargs: Any,
) -> Any:
    """The value of the first key of ``lookup`` (a target of ``tgt_type``) this minion matches.

    ``merge`` is merged into the match; with no match, ``lookup[default]``
    (or ``{}``).
    """
    funcs = _funcs()
    if tgt_type not in funcs:
        raise SaltInvocationError(f"Unknown target type {tgt_type!r}")
    for key in lookup:
        hit = funcs[tgt_type](key, minion_id=minion_id) if tgt_type in _ID_TYPES else funcs[tgt_type](key)
        if not hit:
            continue
        value = copy.deepcopy(lookup[key])
        if merge:
            if not isinstance(merge, Mapping):
                raise SaltInvocationError("filter_by merge argument must be a dictionary.")
            if value is None:
                return copy.deepcopy(dict(merge))
            if isinstance(value, Mapping):
                return _update(value, merge, merge_lists)
        return value
    return copy.deepcopy(lookup.get(default, {}))


__func_alias__ = {"list_": "list"}
