"""Merging nested dicts the ways Salt's pillar and ``slsutil.merge`` do.

Runs wherever pillar is compiled or templates merge maps. Strategies:
``recurse`` (``smart`` for YAML renderers): mappings merge key by key, lists
are replaced unless ``merge_lists``; ``overwrite``: top-level keys replaced;
``aggregate`` behaves as recurse here; ``none``: nothing is merged.
:func:`update` and :func:`merge` never modify their inputs, and the result
shares no mutable containers with ``update``. :func:`update_in_place` is
Salt's own ``dictupdate.update`` for the execution functions that, in Salt,
change the caller's dict (``defaults.merge``, ``slsutil.update``): templates
rely on ``{% do salt['defaults.merge'](a, b) %}`` changing ``a``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping
from typing import Any, cast


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


def update_in_place(dest: Any, upd: Any, recursive_update: bool = True, merge_lists: bool = False) -> Any:
    """Merge ``upd`` into ``dest`` itself and return ``dest``, as Salt 3007's ``dictupdate.update``:
    nested mappings present on both sides are merged in place, lists are replaced (with
    ``merge_lists``: a copy of ``dest``'s list extended with ``upd``'s new items), any other value
    of ``upd`` is stored as it is (not copied). ``recursive_update=False`` is a plain
    ``dict.update``. TypeError for anything but two mappings."""
    if not isinstance(dest, Mapping) or not isinstance(upd, Mapping):
        raise TypeError("Cannot update using non-dict types in dictupdate.update()")
    # checked as a Mapping, as Salt does: a read-only one fails (TypeError) at its first write
    out = cast("MutableMapping[Any, Any]", dest)
    if not recursive_update or not set(dest) & set(upd):
        for key in upd:
            out[key] = upd[key]
        return out
    for key, val in upd.items():
        cur = dest.get(key)
        if isinstance(cur, Mapping) and isinstance(val, Mapping):
            out[key] = update_in_place(cur, val, merge_lists=merge_lists)
        elif merge_lists and isinstance(cur, list) and isinstance(val, list):
            merged = copy.deepcopy(cur)
            merged.extend([item for item in val if item not in merged])  # new items of upd, as listed
            out[key] = merged
        else:
            out[key] = val
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
