"""Salt 3007's serializers: data to text (or bytes) and back, by name.

Runs wherever ``slsutil.serialize`` / ``deserialize`` run (minion,
``briny-call``, master-side rendering: pure, data in, data out). The names
and outputs are those of the serializers a stock Salt 3007 has without extra
packages:

- ``yaml``: a safe dump with every mapping's keys sorted (ordered mappings
  too), tuples as lists, sets as ``!!set``, block or flow style as PyYAML's
  ``default_flow_style=None`` chooses, and the trailing newline (or
  ``...`` document end) removed; options go to ``yaml.dump``. Loading is
  safe, plus Salt's ``!encrypted`` tag (a plain string).
- ``json``: ``json.dumps`` with ``ensure_ascii=False`` unless given; loading
  a string ignores the options, as Salt's does.
- ``msgpack``: bytes (``use_bin_type``); loading gives lists and text.
- ``plist``: XML bytes, or binary with ``fmt="FMT_BINARY"``.
- ``python``: ``pprint.pformat`` of the data as JSON would carry it.
- ``configparser``: a dict of sections (``DEFAULT`` is the default section);
  loading gives the sections with the defaults folded into each.
- ``keyvalue``: ``key=value`` lines (``separator``, ``quoting``, ``line_ending``).

``toml`` is not among them: Salt's needs the ``toml`` package, which Salt
3007 does not install, so there as here it is "not found". ``yamlex`` is
not provided (briny has no ``yamlex`` renderer). Errors are
:class:`~briny.common.exceptions.SerializationError` and
:class:`~briny.common.exceptions.DeserializationError`; an unknown name or
direction is a :class:`~briny.common.exceptions.CommandExecutionError`
worded as Salt's.
"""

from __future__ import annotations

import configparser
import datetime
import io
import json
import plistlib
import pprint
import shlex
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgpack
import yaml
from yaml.nodes import ScalarNode

from .exceptions import CommandExecutionError, DeserializationError, SerializationError

if TYPE_CHECKING:  # the C dumper and loader when libyaml is there: the same interfaces
    _BaseDumper = yaml.SafeDumper
    _BaseLoader = yaml.SafeLoader
else:
    _BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    _BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Dumper(_BaseDumper):
    """Safe dumper that also writes subclasses of the plain types as those types."""


class _Loader(_BaseLoader):
    """Safe loader that reads Salt's ``!encrypted`` scalars as strings."""


# a subclass of a plain type is written as that type; anything else falls back to SafeDumper's
# own representer of unknown objects (an error)
_PLAIN_TYPES: tuple[tuple[type, Callable[[Any, Any], Any]], ...] = (
    (str, _Dumper.represent_str),
    (bool, _Dumper.represent_bool),
    (int, _Dumper.represent_int),
    (float, _Dumper.represent_float),
    (list, _Dumper.represent_list),
    (tuple, _Dumper.represent_list),
    (dict, _Dumper.represent_dict),
    (OrderedDict, _Dumper.represent_dict),
    (set, _Dumper.represent_set),
    (datetime.date, _Dumper.represent_date),
    (datetime.datetime, _Dumper.represent_datetime),
    (type(None), _Dumper.represent_none),
)
for _type, _how in _PLAIN_TYPES:
    _Dumper.add_multi_representer(_type, _how)


def _construct_encrypted(loader: _Loader, node: ScalarNode) -> str:
    return str(loader.construct_scalar(node))


_Loader.add_constructor("!encrypted", _construct_encrypted)


def _yaml_dump(obj: Any, **options: Any) -> str | bytes | None:
    options.setdefault("Dumper", _Dumper)
    options.setdefault("default_flow_style", None)
    text: str | bytes | None = yaml.dump(obj, **options)
    if not isinstance(text, str):  # written to a stream (None), or encoded (bytes)
        return text
    if text.endswith("\n...\n"):
        return text[:-5]
    return text.removesuffix("\n")


def _yaml_load(data: Any, **options: Any) -> Any:
    options.setdefault("Loader", _Loader)  # the safe loader, unless the caller names one (as Salt's does)
    return yaml.load(data, **options)  # noqa: S506 - _Loader is a SafeLoader (above)


def _json_dump(obj: Any, **options: Any) -> Any:
    options.setdefault("ensure_ascii", False)
    if "fp" in options:
        return json.dump(obj, options.pop("fp"), **options)
    return json.dumps(obj, **options)


def _json_load(data: Any, **options: Any) -> Any:
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    if isinstance(data, str):
        return json.loads(data)  # options are ignored for text, as Salt does
    return json.load(data, **options)


def _msgpack_dump(obj: Any, **options: Any) -> bytes:
    options.pop("encoding", None)
    return msgpack.packb(obj, **options)


def _msgpack_load(data: Any, **options: Any) -> Any:
    options.pop("encoding", None)
    options.setdefault("use_list", True)
    options.setdefault("raw", False)
    options.setdefault("strict_map_key", False)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    return msgpack.unpackb(data, **options)


def _plist_dump(obj: Any, **options: Any) -> Any:
    if options.pop("fmt", None) == "FMT_BINARY":
        options["fmt"] = plistlib.FMT_BINARY
    if "fp" in options:
        return plistlib.dump(obj, options.pop("fp"), **options)
    return plistlib.dumps(obj, **options)


def _plist_load(data: Any, **options: Any) -> Any:
    if isinstance(data, str):
        data = data.encode("utf-8")
    if isinstance(data, bytes):
        return plistlib.loads(data, **options)
    return plistlib.load(data, **options)


def _python_dump(obj: Any, **options: Any) -> str:
    return pprint.pformat(json.loads(json.dumps(obj, ensure_ascii=False)), **options)


def _ini_dump(obj: Any, **options: Any) -> Any:
    if not isinstance(obj, dict):
        raise TypeError(f"configparser can only serialize dictionaries, not {type(obj)}")
    out = options.pop("fp", None)
    parser = configparser.ConfigParser(**options)
    for section, keys in obj.items():
        name = str(section)
        if name != configparser.DEFAULTSECT:
            parser.add_section(name)
        for key, value in keys.items():
            parser.set(name, parser.optionxform(str(key)), None if value is None else str(value))
    if out is not None:
        parser.write(out)
        return None
    text = io.StringIO()
    parser.write(text)
    return text.getvalue()


def _ini_load(data: Any, **options: Any) -> dict[str, dict[str, str]]:
    parser = configparser.ConfigParser(**options)
    parser.read_file(io.StringIO(data) if isinstance(data, str) else data)
    return {section: dict(parser.items(section)) for section in parser.sections()}


def _dequote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _keyvalue_dump(obj: Any, **options: Any) -> str:
    if not isinstance(obj, (dict, list, tuple, set)):
        raise SerializationError("Input validation failed. Iterable required.")
    sep = options.get("separator", "=")
    pairs = obj.items() if isinstance(obj, dict) else obj
    lines = []
    for key, val in pairs:
        if options.get("quoting"):
            val = shlex.quote(val)
        lines.append(f"{key}{sep}{val}")
    return str(options.get("line_ending") or "\n").join(lines)


def _keyvalue_load(data: Any, **options: Any) -> dict[str, str]:
    if not isinstance(data, (bytes, str)):
        data = data.read()
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    sep = options.get("separator", "=")
    out: dict[str, str] = {}
    for line in data.splitlines():
        key, val = line.split(sep, 1)
        out[key] = _dequote(val) if options.get("quoting") is False else val
    return out


Fn = Callable[..., Any]
# name -> (serialize, deserialize or None)
SERIALIZERS: dict[str, tuple[Fn, Fn | None]] = {
    "yaml": (_yaml_dump, _yaml_load),
    "json": (_json_dump, _json_load),
    "msgpack": (_msgpack_dump, _msgpack_load),
    "plist": (_plist_dump, _plist_load),
    "python": (_python_dump, None),
    "configparser": (_ini_dump, _ini_load),
    "keyvalue": (_keyvalue_dump, _keyvalue_load),
}


def _lookup(name: Any, direction: str) -> Fn:
    pair = SERIALIZERS.get(name) if isinstance(name, str) else None
    if pair is None:
        raise CommandExecutionError(f"Serializer '{name}' not found.")
    fn = pair[0] if direction == "serialize" else pair[1]
    if fn is None:
        raise CommandExecutionError(f"Serializer '{name}' does not implement {direction}.")
    return fn


def _clean(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if not str(k).startswith("__")}


def serialize(name: str, obj: Any, **options: Any) -> Any:
    """``obj`` written by the serializer ``name`` (text, or bytes for msgpack and plist)."""
    fn = _lookup(name, "serialize")
    try:
        return fn(obj, **_clean(options))
    except SerializationError:
        raise
    except Exception as exc:  # the libraries raise anything for data they cannot write
        raise SerializationError(str(exc)) from exc


def deserialize(name: str, data: Any, **options: Any) -> Any:
    """The data that ``data`` (text, bytes or a stream) holds for the serializer ``name``."""
    fn = _lookup(name, "deserialize")
    try:
        return fn(data, **_clean(options))
    except Exception as exc:  # the libraries raise anything for input they cannot read
        raise DeserializationError(str(exc)) from exc
