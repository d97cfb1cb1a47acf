"""Salt's Jinja filters and tests, written for briny.

Runs wherever templates render; :mod:`briny.common.jinja` installs
:data:`FILTERS` and :data:`TESTS` into every environment it builds. Each
filter behaves as Salt 3007's filter of the same name was observed to behave
(outputs recorded in ``tests/unit/common/test_jinja_filters.py``).

Filters work on their arguments only, except ``which`` (the host's ``PATH``),
which asks the environment's ``boundary`` first: refused on the master.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac as _hmac
import ipaddress
import itertools
import json
import os
import pprint
import random
import re
import shlex
import shutil
import string
import uuid as _uuid
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Callable, cast

import yaml
from jinja2 import pass_context, pass_environment
from jinja2.exceptions import TemplateRuntimeError
from jinja2.runtime import Undefined
from jinja2.sandbox import SandboxedEnvironment

from . import yamlout, yamlloader
from .traverse import traverse

# Salt's fixed namespace for the ``uuid`` filter (uuid5 of the value).
_UUID_NS = _uuid.UUID("91633EBF-1C86-5E33-935A-28061F4B480E")


def _text(value: Any) -> str:
    """Module objects (``{% import %}``ed templates) and Markup as plain text."""
    return str(value)


# --- serializers ---------------------------------------------------------


def to_json(value: Any, sort_keys: bool = True, indent: int | None = None) -> str:
    return json.dumps(value, sort_keys=sort_keys, indent=indent, ensure_ascii=False, default=_json_default).strip()


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    if isinstance(obj, Undefined):
        return str(obj)
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def tojson(value: Any, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=True, indent=indent, default=_json_default)
    for char, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027")):
        text = text.replace(char, esc)
    return text


def to_yaml(value: Any, flow_style: bool = True) -> str:
    text = yamlout.safe_dump(value, default_flow_style=flow_style).strip()
    if text.endswith("\n..."):
        text = text[:-4]
    elif text == "...":
        text = ""
    return text


def to_python(value: Any) -> str:
    return pprint.pformat(value).strip()


def load_yaml(value: Any) -> Any:
    try:
        return yamlloader.load(_text(value))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None)
        if mark is not None and problem:
            from .render import error_context  # late: only a YAML error needs it

            buf = mark.buffer or _text(value)
            raise TemplateRuntimeError(
                f"Encountered error loading yaml: {problem}\n" + error_context(buf.rstrip("\x00"), mark.line + 1)
            ) from None
        raise TemplateRuntimeError(f"Encountered error loading yaml: {exc}") from None


def load_json(value: Any) -> Any:
    try:
        return json.loads(_text(value))
    except (ValueError, TypeError):
        raise TemplateRuntimeError(f"Unable to load json from {value}") from None


def load_text(value: Any) -> str:
    return _text(value)


def dict_to_sls_yaml_params(value: Mapping[Any, Any], flow_style: bool = False) -> str:
    return yamlout.safe_dump([{k: v} for k, v in value.items()], default_flow_style=flow_style).strip()


# --- YAML quoting --------------------------------------------------------


def yaml_encode(value: Any) -> str:
    return yamlout.encode_scalar(value)


def yaml_dquote(value: Any) -> str:
    return yamlout.double_quoted(value)


def yaml_squote(value: Any) -> str:
    return yamlout.single_quoted(value)


# --- strings and regexes -------------------------------------------------


def _flags(ignorecase: bool, multiline: bool) -> int:
    return (re.I if ignorecase else 0) | (re.M if multiline else 0)


def _groups(found: Any) -> Any:
    """A match's groups; the whole match as a 1-tuple when the pattern has none."""
    if not found:
        return None
    return found.groups() or (found.group(0),)


def regex_match(txt: str, rgx: str, ignorecase: bool = False, multiline: bool = False) -> Any:
    return _groups(re.match(rgx, txt, _flags(ignorecase, multiline)))


def regex_search(txt: str, rgx: str, ignorecase: bool = False, multiline: bool = False) -> Any:
    return _groups(re.search(rgx, txt, _flags(ignorecase, multiline)))


def regex_replace(txt: str, rgx: str, val: str, ignorecase: bool = False, multiline: bool = False) -> str:
    return re.compile(rgx, _flags(ignorecase, multiline)).sub(val, txt)


def regex_escape(value: str) -> str:
    return re.escape(value)


def test_match(txt: str, rgx: str, ignorecase: bool = False, multiline: bool = False) -> bool:
    return re.match(rgx, txt, _flags(ignorecase, multiline)) is not None


def quote(value: str) -> str:
    return shlex.quote(value)


def to_bool(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.lower() in ("yes", "1", "true")
    if isinstance(value, int):
        return value > 0
    if not isinstance(value, Hashable):
        return len(value) > 0
    return False


def to_num(value: Any) -> Any:
    try:
        return int(value)
    except (ValueError, TypeError):
        try:
            return float(value)
        except (ValueError, TypeError):
            return value


def to_bytes(value: Any, encoding: str = "utf-8") -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode(encoding)
    raise TypeError("expected str, bytes, or bytearray")


def to_snake_case(value: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z][a-z])", lambda m: "_" + m.group(0), value).lower()


def to_camelcase(value: str, uppercamel: bool = False) -> str:
    parts = value.split("_")
    head = parts[0].capitalize() if uppercamel else parts[0]
    return head + "".join(p.capitalize() for p in parts[1:])


def contains_whitespace(value: str) -> bool:
    return any(ch.isspace() for ch in value)


def substring_in_list(value: str, lst: Iterable[str]) -> bool:
    return any(value in item for item in lst)


def is_hex(value: Any) -> bool:
    try:
        int(str(value), 16)
        return True
    except ValueError:
        return False


def uuid_filter(value: str) -> str:
    return str(_uuid.uuid5(_UUID_NS, value))


def skip(_value: Any) -> str:
    return ""


@pass_context
def method_call(ctx: Any, obj: Any, f_name: str, *args: Any, **kwargs: Any) -> Any:
    """``obj.f_name(...)`` through the sandbox's checks, as written in a template; None when
    ``obj`` has no such attribute (Salt's)."""
    if not isinstance(f_name, str) or f_name.startswith("_"):
        raise TemplateRuntimeError(f"method_call refuses private method {f_name!r}")
    env = ctx.environment
    if not hasattr(obj, f_name):
        return None
    if isinstance(env, SandboxedEnvironment):
        # the sandbox's getattr: unsafe attributes fail when called, str.format is its safe one
        return env.call(ctx, env.getattr(obj, f_name), *args, **kwargs)
    return getattr(obj, f_name)(*args, **kwargs)


def human_to_bytes(size: Any) -> int:
    text = str(size).strip()
    found = re.match(r"^(\d+(?:\.\d+)?)\s*([kmgtpezy]?)(i?b?)$", text, re.I)
    if not found:
        return 0
    number, unit = float(found.group(1)), found.group(2).lower()
    power = " kmgtpezy".index(unit) if unit else 0
    return int(number * 1024**power)


# --- hashing and encoding ------------------------------------------------


def _hash(name: str) -> Callable[[Any], str]:
    def digest(value: Any) -> str:
        return hashlib.new(name, to_bytes(value)).hexdigest()

    digest.__name__ = name
    return digest


def base64_encode(value: Any) -> str:
    return base64.b64encode(to_bytes(value)).decode()


def base64_decode(value: Any) -> Any:
    raw = base64.b64decode(to_bytes(value))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def hmac_filter(value: Any, shared_secret: str, challenge_hmac: str) -> bool:
    computed = base64.b64encode(_hmac.new(to_bytes(shared_secret), to_bytes(value), hashlib.sha256).digest()).decode()
    return _hmac.compare_digest(computed, str(challenge_hmac))


def hmac_compute(value: Any, shared_secret: str) -> str:
    return _hmac.new(to_bytes(shared_secret), to_bytes(value), hashlib.sha256).hexdigest()


def random_hash(size: int = 9999999999, hash_type: str = "md5") -> str:
    return hashlib.new(hash_type, str(random.SystemRandom().randint(0, size)).encode()).hexdigest()


def random_str(size: int = 10) -> str:
    chars = string.ascii_letters + string.digits
    return "".join(random.SystemRandom().choice(chars) for _ in range(int(size)))


def random_sample(value: Any, k: int, seed: Any = None) -> list[Any]:
    return (
        random.Random(seed).sample(list(value), k) if seed is not None else random.SystemRandom().sample(list(value), k)
    )


def random_shuffle(value: Any, seed: Any = None) -> list[Any]:
    items = list(value)
    (random.Random(seed) if seed is not None else random.SystemRandom()).shuffle(items)
    return items


# --- dates ---------------------------------------------------------------


def strftime(value: Any, date_format: str = "%Y-%m-%d") -> str:
    if isinstance(value, datetime.datetime):
        moment = value
    elif isinstance(value, datetime.date):
        moment = datetime.datetime(value.year, value.month, value.day)
    else:
        try:
            moment = datetime.datetime.fromtimestamp(float(value), datetime.timezone.utc)
        except (TypeError, ValueError):
            try:
                moment = datetime.datetime.fromisoformat(str(value))
            except ValueError:
                raise TemplateRuntimeError(f"Unable to parse {value}") from None
    return moment.strftime(date_format)


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


# --- paths and files -----------------------------------------------------


def path_join(*parts: str) -> str:
    first, rest = str(parts[0]), [str(p).lstrip("/") for p in parts[1:]]
    return os.path.join(first, *rest).rstrip("/") if rest else first


@pass_environment
def which(environment: Any, exe: str) -> str | None:
    """The path of ``exe`` on this host's ``PATH``; on the master the minion's host is needed."""
    boundary = getattr(environment, "boundary", None)
    if boundary is not None:
        raise boundary.refusal("the 'which' filter")
    return shutil.which(exe)


# --- networks ------------------------------------------------------------


def _ip(value: Any) -> Any:
    text = str(value)
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return ipaddress.ip_interface(text)


def _ip_filter(value: Any, version: int | None) -> Any:
    def ok(item: Any) -> bool:
        try:
            addr = _ip(item)
        except ValueError:
            return False
        return version is None or addr.version == version

    if isinstance(value, (list, tuple, set)):
        if version is None:  # Salt lists the IPv4 ones first
            return _ip_filter(value, 4) + _ip_filter(value, 6)
        return [item for item in value if ok(item)]
    return value if ok(value) else None


def ipaddr(value: Any, options: Any = None) -> Any:
    return _ip_filter(value, None)


def _is_ip(value: Any, version: int | None) -> bool:
    try:
        addr = _ip(value)
    except ValueError:
        return False
    return version is None or addr.version == version


def _versioned(fun: Callable[[Any, int | None], Any], version: int | None) -> Callable[..., Any]:
    return lambda value, options=None: fun(value, version)


def ipwrap(value: Any) -> Any:
    if isinstance(value, str) and _is_ip(value, 6):
        return f"[{value}]"
    return value


def network_hosts(value: str, options: Any = None, version: Any = None) -> list[str]:
    return [str(h) for h in ipaddress.ip_network(value, strict=False).hosts()]


def network_size(value: str, options: Any = None, version: Any = None) -> int:
    return ipaddress.ip_network(value, strict=False).num_addresses


def ip_host(value: str, options: Any = None, version: Any = None) -> str:
    return str(ipaddress.ip_interface(value))


FILTERS: dict[str, Callable[..., Any]] = {
    "json": to_json,
    "tojson": tojson,
    "yaml": to_yaml,
    "python": to_python,
    "load_yaml": load_yaml,
    "load_json": load_json,
    "load_text": load_text,
    "dict_to_sls_yaml_params": dict_to_sls_yaml_params,
    "yaml_encode": yaml_encode,
    "yaml_dquote": yaml_dquote,
    "yaml_squote": yaml_squote,
    "regex_match": regex_match,
    "regex_search": regex_search,
    "regex_replace": regex_replace,
    "regex_escape": regex_escape,
    "quote": quote,
    "to_bool": to_bool,
    "to_num": to_num,
    "str_to_num": to_num,
    "to_bytes": to_bytes,
    "to_snake_case": to_snake_case,
    "to_camelcase": to_camelcase,
    "contains_whitespace": contains_whitespace,
    "substring_in_list": substring_in_list,
    "is_hex": is_hex,
    "uuid": uuid_filter,
    "skip": skip,
    "method_call": method_call,
    "human_to_bytes": human_to_bytes,
    "md5": _hash("md5"),
    "sha1": _hash("sha1"),
    "sha256": _hash("sha256"),
    "sha512": _hash("sha512"),
    "base64_encode": base64_encode,
    "base64_decode": base64_decode,
    "hmac": hmac_filter,
    "hmac_compute": hmac_compute,
    "random_hash": random_hash,
    "random_str": random_str,
    "rand_str": random_str,
    "random_sample": random_sample,
    "random_shuffle": random_shuffle,
    "strftime": strftime,
    "date_format": strftime,
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
    "path_join": path_join,
    "which": which,
    "ipaddr": ipaddr,
    "ipv4": _versioned(_ip_filter, 4),
    "ipv6": _versioned(_ip_filter, 6),
    "is_ip": _versioned(_is_ip, None),
    "is_ipv4": _versioned(_is_ip, 4),
    "is_ipv6": _versioned(_is_ip, 6),
    "ipwrap": ipwrap,
    "network_hosts": network_hosts,
    "network_size": network_size,
    "ip_host": ip_host,
}

TESTS: dict[str, Callable[..., Any]] = {
    "match": test_match,
    "equalto": lambda value, other: value == other,
    "list": is_list,
}
