"""Merging nested dicts the ways Salt's pillar and ``slsutil.merge`` do.

Runs wherever pillar is compiled or templates merge maps. Strategies:
``recurse`` (``smart`` for YAML renderers): mappings merge key by key, lists
are replaced unless ``merge_lists``; ``overwrite``: top-level keys replaced;
``aggregate`` behaves as recurse here; ``none``: nothing is merged.
Inputs are never modified; the result shares no mutable containers with
``update``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def update(dest: Mapping[Any, Any], upd: Mapping[Any, Any], merge_lists: bool = False) -> dict[Any, Any]:
    """Recursive merge of ``upd`` into a copy of ``dest`` (Salt's ``dictupdate.update``): mappings
    merge key by key, lists are replaced, or extended with the new items with ``merge_lists``,
    anything else is replaced by a deep copy of ``upd``'s value."""
    out = dict(dest)
    stack = [(out, upd)]
    while stack:
        target, source = stack.pop()
        for key, val in source.items():
            cur = target.get(key)
            if isinstance(cur, Mapping) and isinstance(val, Mapping):
                target[key] = dict(cur)
                stack.append((target[key], val))
            elif merge_lists and isinstance(cur, list) and isinstance(val, list):
                target[key] = cur + [v for v in copy.deepcopy(val) if v not in cur]
            else:
                target[key] = copy.deepcopy(val)
    return out


def merge(
    dest: dict[str, Any],
    upd: dict[str, Any],
    strategy: str = "smart",
    renderer: str = "yaml",
    merge_lists: bool = False,
) -> dict[str, Any]:
    if strategy in ("smart", "recurse", "aggregate", "recurse_list"):
        return update(dest, upd, merge_lists or strategy == "recurse_list")
    if strategy == "overwrite":
        out = dict(dest)
        out.update(copy.deepcopy(upd))
        return out
    if strategy == "list":
        return update(dest, upd, merge_lists=True)
    if strategy == "none":
        return dest
    return update(dest, upd, merge_lists)
