"""Salt's Jinja filters on text: serializers, YAML quoting, strings and regular
expressions, hashes and encodings, random values, dates.

Pure: each works on its arguments only (``strftime`` of nothing reads the clock).
Part of :mod:`briny.common.state.jinja_filters`.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac as _hmac
import json
import pprint
import random
import re
import shlex
import string
import uuid as _uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import yaml
from jinja2 import pass_context
from jinja2.exceptions import TemplateRuntimeError
from jinja2.runtime import Undefined
from jinja2.sandbox import SandboxedEnvironment

from ... import yamlloader, yamlout
from ..stages import error_context

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
    return (re.IGNORECASE if ignorecase else 0) | (re.MULTILINE if multiline else 0)


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
    found = re.match(r"^(\d+(?:\.\d+)?)\s*([kmgtpezy]?)(i?b?)$", text, re.IGNORECASE)
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


def strftime(value: Any = None, date_format: str = "%Y-%m-%d") -> str:
    """A date (a datetime, a date, a timestamp, an ISO string; None: now) formatted, in local
    time as Salt's ``strftime``/``date_format``."""
    if value is None:
        moment = datetime.datetime.now()
    elif isinstance(value, datetime.datetime):
        moment = value
    elif isinstance(value, datetime.date):
        moment = datetime.datetime(value.year, value.month, value.day)
    else:
        try:
            moment = datetime.datetime.fromtimestamp(float(value))
        except (TypeError, ValueError, OverflowError, OSError):
            try:
                moment = datetime.datetime.fromisoformat(str(value))
            except ValueError:
                raise TemplateRuntimeError(f"Unable to parse {value}") from None
    return moment.strftime(date_format)


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
}
