"""Which accepted minions a target names (``briny -L/-G/-E/-C ...``).

Runs on the master, in a worker thread of the daemon's executor (the caller
reads the key store's folder listings there, and matching walks every
accepted minion's cached grains; never on the event loop). Pure otherwise:
the caller passes the accepted ids and a grains lookup.

Semantics are Salt 3007's matchers (:mod:`briny.common.matchers`), applied
to the accepted minions only:

- ``glob`` (default), ``pcre``, ``list``: on the minion id;
- ``grain``, ``grain_pcre``, ``ipcidr``: on the grains the minion last sent
  (kept per minion in the master's cachedir, so targeting survives a
  master restart). A minion whose grains the master has never seen is not
  matched (Salt's non-greedy answer; every briny minion sends its grains
  when it connects);
- ``compound``: ``and``/``or``/``not``/parentheses over ``G@ P@ L@ E@ S@
  N@`` words and plain globs; ``I@``/``J@`` (pillar) match only when the
  caller passes ``pillar_of`` (the master's publishes and the mine do: the
  pillars the master has compiled), else nothing;
- ``nodegroup``: ``opts["nodegroups"]``, expanded as compound;
- ``range`` (``-R``) and ``R@`` words: refused with Salt's "Range matcher
  unavailable" (briny has no range server client; Salt without ``seco.range``
  logs it and matches nothing).

The grains themselves live in :class:`briny.master.grainscache.GrainsCache`
(written by the loop, read here through its lock).

A malformed target raises :class:`SaltInvocationError` with a message the
operator can act on (Salt logs and matches nothing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from briny.common import matchers
from briny.common.exceptions import SaltInvocationError
from briny.common.traverse import DEFAULT_DELIM

log = logging.getLogger(__name__)

TGT_TYPES = frozenset(
    {
        "glob",
        "pcre",
        "list",
        "grain",
        "grain_pcre",
        "pillar",
        "pillar_pcre",
        "pillar_exact",
        "ipcidr",
        "compound",
        "nodegroup",
        "range",
    }
)
# target types that only look at the id: no grains needed
_ID_ONLY = frozenset({"glob", "pcre", "list"})

GrainsLookup = Callable[[str], Mapping[str, Any] | None]


def _no_grains(_minion_id: str) -> Mapping[str, Any] | None:
    return None


def _as_list(tgt: Any) -> list[str]:
    if isinstance(tgt, str):
        return [t for t in (p.strip() for p in tgt.split(",")) if t]
    if isinstance(tgt, (list, tuple, set, frozenset)):
        return [str(t) for t in tgt]
    raise SaltInvocationError(f"a list target must be a comma-separated string or a list, not {type(tgt).__name__}")


def check_target(tgt: Any, tgt_type: str) -> None:
    """Raise SaltInvocationError when the target cannot be evaluated at all."""
    if tgt_type not in TGT_TYPES:
        raise SaltInvocationError(f"Unknown target type {tgt_type!r}; use one of {', '.join(sorted(TGT_TYPES))}")
    if tgt_type == "list":
        _as_list(tgt)
        return
    if not isinstance(tgt, str) or not tgt:
        raise SaltInvocationError(f"a {tgt_type} target must be a non-empty string")
    if tgt_type in ("grain", "grain_pcre", "pillar", "pillar_pcre", "pillar_exact") and ":" not in tgt:
        raise SaltInvocationError(f"a {tgt_type} target is KEY:VALUE (e.g. os:Debian), not {tgt!r}")


def check_minions(
    tgt: Any,
    tgt_type: str,
    accepted: Iterable[str],
    grains_of: GrainsLookup = _no_grains,
    opts: Mapping[str, Any] | None = None,
    pillar_of: GrainsLookup | None = None,
) -> list[str]:
    """The sorted ids among ``accepted`` that ``tgt`` of ``tgt_type`` names. ``pillar_of`` gives a
    minion's pillar as the master last compiled it (None: unknown, matching no pillar target);
    without it, pillar targets match nothing."""
    tgt_type = (tgt_type or "glob").lower()
    check_target(tgt, tgt_type)
    opts = opts or {}
    ids = sorted(set(accepted))
    if tgt_type == "list":
        wanted = set(_as_list(tgt))
        return [i for i in ids if i in wanted]
    delimiter = str(opts.get("delimiter") or DEFAULT_DELIM)
    nodegroups = opts.get("nodegroups") or {}
    # evaluate once on a dummy minion so a malformed expression fails even with no minions
    matchers.match(tgt, tgt_type, "", grains={}, pillar=None, delimiter=delimiter, nodegroups=nodegroups)
    out: list[str] = []
    for minion_id in ids:
        grains = None if tgt_type in _ID_ONLY else grains_of(minion_id)
        if tgt_type in ("grain", "grain_pcre", "ipcidr") and grains is None:
            continue
        pillar = pillar_of(minion_id) if pillar_of is not None and tgt_type not in _ID_ONLY else None
        if matchers.match(
            tgt, tgt_type, minion_id, grains=grains, pillar=pillar, delimiter=delimiter, nodegroups=nodegroups
        ):
            out.append(minion_id)
    return out
