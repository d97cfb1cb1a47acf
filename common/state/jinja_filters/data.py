"""Salt's Jinja filters on data: lists and sets, comparisons, entries, nested dicts,
MySQL tables and byte encodings of nested data.

Pure: each works on its arguments only. Part of :mod:`briny.common.state.jinja_filters`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, cast

from ...traverse import traverse

# --- lists and sets ------------------------------------------------------


def unique(values: Any) -> Any:
    if isinstance(values, Hashable):  # Salt's rule: a str or a tuple gives the set of its items
        return set(cast(Iterable[Any], values))
    ret: list[Any] = []
    for value in values:
        if value not in ret:
            ret.append(value)
    return ret


def sequence(value: Any) -> Any:
    if not isinstance(value, (list, tuple, set, dict)):
        return [value]
    return value


def lst_min(obj: Any) -> Any:
    return min(obj)


def lst_max(obj: Any) -> Any:
    return max(obj)


def avg(lst: Any) -> float:
    if not isinstance(lst, Hashable):
        return float(sum(lst) / len(lst))
    return float(cast(Any, lst))  # a number, or float()'s own error


def _both_hashable(a: Any, b: Any) -> bool:
    return isinstance(a, Hashable) and isinstance(b, Hashable)


def union(lst1: Any, lst2: Any) -> Any:
    if _both_hashable(lst1, lst2):
        return set(lst1) | set(lst2)
    return unique(list(lst1) + list(lst2))


def intersect(lst1: Any, lst2: Any) -> Any:
    if _both_hashable(lst1, lst2):
        return set(lst1) & set(lst2)
    return unique([e for e in lst1 if e in lst2])


def difference(lst1: Any, lst2: Any) -> Any:
    if _both_hashable(lst1, lst2):
        return set(lst1) - set(lst2)
    return unique([e for e in lst1 if e not in lst2])


def symmetric_difference(lst1: Any, lst2: Any) -> Any:
    if _both_hashable(lst1, lst2):
        return set(lst1) ^ set(lst2)
    both = intersect(lst1, lst2)
    return unique([e for e in union(lst1, lst2) if e not in both])


def is_list(value: Any) -> bool:
    return isinstance(value, list)


def is_iter(value: Any) -> bool:
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes))


def exactly_n_true(iterable: Iterable[Any], amount: int = 1) -> bool:
    return sum(1 for item in iterable if item) == amount


def exactly_one_true(iterable: Iterable[Any]) -> bool:
    return exactly_n_true(iterable, 1)


def flatten(data: Any, levels: int | None = None, preserve_nulls: bool = False) -> list[Any]:
    ret: list[Any] = []
    for element in data:
        if element is None and not preserve_nulls:
            continue
        if isinstance(element, list) and (levels is None or levels > 0):
            ret.extend(flatten(element, None if levels is None else levels - 1, preserve_nulls))
        else:
            ret.append(element)
    return ret


def sorted_ignorecase(value: Iterable[str]) -> list[str]:
    return sorted(value, key=lambda s: s.casefold())


def combinations(value: Iterable[Any], r: int) -> Any:
    return itertools.combinations(value, r)


def combinations_with_replacement(value: Iterable[Any], r: int) -> Any:
    return itertools.combinations_with_replacement(value, r)


def compare_lists(old: Any, new: Any) -> dict[str, list[Any]]:
    ret: dict[str, list[Any]] = {}
    added = [item for item in new if item not in old]
    removed = [item for item in old if item not in new]
    if added:
        ret["new"] = added
    if removed:
        ret["old"] = removed
    return ret


def compare_dicts(old: Any = None, new: Any = None) -> dict[Any, dict[str, Any]]:
    old, new = old or {}, new or {}
    ret: dict[Any, dict[str, Any]] = {}
    for key in list(new) + [k for k in old if k not in new]:
        if key not in old:
            ret[key] = {"old": "", "new": new[key]}
        elif key not in new:
            ret[key] = {"new": "", "old": old[key]}
        elif new[key] != old[key]:
            ret[key] = {"old": old[key], "new": new[key]}
    return ret


def to_entries(data: Mapping[Any, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": v} for k, v in data.items()]


def from_entries(entries: Iterable[Mapping[str, Any]]) -> dict[Any, Any]:
    ret: dict[Any, Any] = {}
    for entry in entries:
        key = next((entry[k] for k in ("key", "k", "name", "Name", "Key", "K") if k in entry), None)
        value = next((entry[k] for k in ("value", "v", "Value", "V") if k in entry), None)
        ret[key] = value
    return ret


# --- nested data ---------------------------------------------------------


def _dict_parent(data: dict[Any, Any], keys: str, delimiter: str) -> tuple[dict[Any, Any], str]:
    parts = keys.split(delimiter)
    ptr = data
    for part in parts[:-1]:
        ptr = ptr.setdefault(part, {})
    return ptr, parts[-1]


def _dict_key_op(apply: Callable[[dict[Any, Any], Any, Any], None]) -> Callable[..., Any]:
    """``data|set_dict_key_value('a:b', value)`` and friends: change data in place, return it."""

    def change(data: dict[Any, Any], keys: str, value: Any, delimiter: str = ":") -> Any:
        parent, last = _dict_parent(data, keys, delimiter)
        apply(parent, last, value)
        return data

    return change


set_dict_key_value = _dict_key_op(lambda p, k, v: p.__setitem__(k, v))
update_dict_key_value = _dict_key_op(lambda p, k, v: p.setdefault(k, {}).update(v))
append_dict_key_value = _dict_key_op(lambda p, k, v: p.setdefault(k, []).append(v))
extend_dict_key_value = _dict_key_op(lambda p, k, v: p.setdefault(k, []).extend(v))


def check_whitelist_blacklist(value: str, whitelist: Any = None, blacklist: Any = None) -> bool:
    def matches(pats: Any) -> bool:
        pats = [pats] if isinstance(pats, str) else list(pats)
        return any(value == p or re.fullmatch(p, value) is not None for p in pats)

    if blacklist is not None and matches(blacklist):
        return False
    if whitelist is not None:
        return matches(whitelist)
    return True


# --- tables and encodings ----------------------------------------------------


def mysql_to_dict(data: Iterable[str], key: str) -> dict[Any, dict[str, Any]]:
    """Rows of a MySQL client table (its lines: ``| id | name |`` under a header row, ``+---``
    rules skipped) as ``{row[key]: {column: value}}``, numbers made numbers, as Salt's."""
    ret: dict[Any, dict[str, Any]] = {}
    headers: list[str] | None = None
    for line in data:
        if not line or line.startswith("+"):
            continue
        cells = [cell.strip() for cell in line.split("|")]
        if headers is None:
            headers = cells
            continue
        row = {headers[i]: _to_num(cells[i]) for i in range(1, len(headers) - 1)}
        ret[row[key]] = row
    return ret


def _to_num(value: str) -> Any:
    for convert in (int, float):
        try:
            return convert(value)
        except ValueError:
            pass
    return value


def encode_data(data: Any, encoding: str | None = None, errors: str = "strict") -> Any:
    """Every string (keys too) of nested data as bytes: Salt's ``json_encode_dict`` /
    ``json_encode_list`` (and their old names ``json_decode_dict`` / ``json_decode_list``)."""
    if isinstance(data, str):
        return data.encode(encoding or "utf-8", errors)
    if isinstance(data, Mapping):
        return {encode_data(k, encoding, errors): encode_data(v, encoding, errors) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [encode_data(v, encoding, errors) for v in data]
    return data


FILTERS: dict[str, Callable[..., Any]] = {
    "unique": unique,
    "sequence": sequence,
    "min": lst_min,
    "max": lst_max,
    "avg": avg,
    "union": union,
    "intersect": intersect,
    "difference": difference,
    "symmetric_difference": symmetric_difference,
    "is_list": is_list,
    "is_iter": is_iter,
    "exactly_n_true": exactly_n_true,
    "exactly_one_true": exactly_one_true,
    "flatten": flatten,
    "sorted_ignorecase": sorted_ignorecase,
    "combinations": combinations,
    "combinations_with_replacement": combinations_with_replacement,
    "compare_lists": compare_lists,
    "compare_dicts": compare_dicts,
    "to_entries": to_entries,
    "from_entries": from_entries,
    "traverse": traverse,
    "set_dict_key_value": set_dict_key_value,
    "update_dict_key_value": update_dict_key_value,
    "append_dict_key_value": append_dict_key_value,
    "extend_dict_key_value": extend_dict_key_value,
    "check_whitelist_blacklist": check_whitelist_blacklist,
    "mysql_to_dict": mysql_to_dict,
    "json_encode_dict": encode_data,
    "json_encode_list": encode_data,
    "json_decode_dict": encode_data,  # Salt 3007 registers the old names on the encoders too
    "json_decode_list": encode_data,
}
