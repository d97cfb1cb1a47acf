"""``file.serialize``: data written to a file by one of Salt's serializers.

Runs on the host applying states. A private file of ``states/file.py`` (loaded
with that module's dunders, see :mod:`briny.common.loader`). The serializers are
the ones of ``slsutil.serialize`` (``briny.common.serializers``): ``yaml``
(the default), ``json``, ``python``, ``msgpack``, ``plist``, ``configparser``
and ``keyvalue``; ``toml`` and ``yamlex`` are "not found", as in a stock Salt
3007. What Salt 3007 does and this reproduces:

- ``yaml`` is written block style, ``json`` indented by 2 with sorted keys;
  ``encoding`` adds ``allow_unicode`` (yaml) / ``ensure_ascii: False`` (json)
  and encodes the text; ``serializer_opts`` / ``deserializer_opts`` (a dict
  or a list of one-key dicts) go to the serializer.
- Text gets a final newline; bytes (``msgpack``, binary ``plist``) do not.
- ``merge_if_exists`` reads the file with the same serializer, merges the
  dataset into it recursively (lists replaced) and reports the recursive
  ``{"new", "old"}`` diff of the data instead of a text diff; when nothing
  would change it returns "in the correct state" without looking at the
  owner or mode, as Salt does.
- ``check_cmd`` runs on a temporary copy (in ``tmp_dir``, ending in
  ``tmp_ext``) only when the file would change; a failure fails the state
  with the text diff it would have made and ``skip_watch``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import BrinyError

from ._file_common import _fail, _salt, _start
from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

# The defaults of Salt 3007's file.serialize for each serializer.
_DUMP_DEFAULTS: dict[str, dict[str, Any]] = {
    "yaml": {"default_flow_style": False},
    "json": {"indent": 2, "separators": (",", ": "), "sort_keys": True},
}
_NO_DESERIALIZER = ("python",)
_KNOWN = ("yaml", "json", "python", "msgpack", "plist", "configparser", "keyvalue")


def _options(value: Any) -> dict[str, Any]:
    """``serializer_opts`` as Salt repacks it: a dict, or a list of dicts merged in order."""
    out: dict[str, Any] = {}
    for item in value if isinstance(value, list) else [value] if isinstance(value, dict) else []:
        if isinstance(item, dict):
            out.update(item)
    return out


def serialize(
    name: str,
    dataset: Any = None,
    dataset_pillar: str | None = None,
    user: Any = None,
    group: Any = None,
    mode: Any = None,
    backup: str = "",
    makedirs: bool = False,
    show_changes: bool = True,
    create: bool = True,
    merge_if_exists: bool = False,
    encoding: str | None = None,
    encoding_errors: str = "strict",
    serializer: str | None = None,
    serializer_opts: Any = None,
    deserializer_opts: Any = None,
    check_cmd: str | None = None,
    tmp_dir: str = "",
    tmp_ext: str = "",
    **kwargs: Any,
) -> dict[str, Any]:
    """Write ``dataset`` (or the pillar value ``dataset_pillar``) to ``name`` with ``serializer``."""
    kwargs.pop("env", None)
    name, ret, bad = _start(name)
    ret["result"] = True
    if not name:
        return _fail(ret, "Must provide name to file.serialize")
    if bad:
        return _fail(ret, bad)
    if not create and not os.path.isfile(name):
        ret["comment"] = f"File {name} is not present and is not set for creation"
        return ret
    formatter = kwargs.pop("formatter", None)
    if serializer and formatter:
        return _fail(ret, "Only one of serializer and formatter are allowed")
    fmt = str(serializer or formatter or "yaml").lower()
    if dataset and dataset_pillar:
        return _fail(ret, "Only one of 'dataset' and 'dataset_pillar' is permitted")
    if dataset_pillar:
        dataset = __salt__["pillar.get"](dataset_pillar)
    if dataset is None:
        return _fail(ret, "Neither 'dataset' nor 'dataset_pillar' was defined")
    if fmt not in _KNOWN:
        return _fail(
            ret,
            f"The {fmt} serializer could not be found. It either does not exist or its "
            "prerequisites are not installed.",
        )
    dump_opts = dict(_DUMP_DEFAULTS.get(fmt, {}))
    if encoding:
        dump_opts.update({"yaml": {"allow_unicode": True}, "json": {"ensure_ascii": False}}.get(fmt, {}))
    dump_opts.update(_options(serializer_opts))
    existing: Any = None
    merged: Any = None
    if merge_if_exists:
        if os.path.isfile(name):
            if fmt in _NO_DESERIALIZER:
                return _fail(ret, f"merge_if_exists is not supported for the {fmt} serializer")
            try:
                with open(name, "rb" if fmt in ("plist", "msgpack") else "r", encoding=None) as fh:
                    raw = fh.read()
                existing = __salt__["slsutil.deserialize"](fmt, raw, **_options(deserializer_opts))
            except (BrinyError, TypeError, OSError, UnicodeDecodeError) as exc:
                return _fail(ret, f"Failed to deserialize existing data: {exc}")
            if existing is not None:
                merged = __salt__["slsutil.merge"](existing, dataset, strategy="recurse")
                if existing == merged:
                    ret["comment"] = f"The file {name} is in the correct state"
                    return ret
                dataset = merged
    elif deserializer_opts:
        ret.setdefault("warnings", []).append(
            "The 'deserializer_opts' option is ignored unless merge_if_exists is set to True."
        )
    try:
        contents = __salt__["slsutil.serialize"](fmt, dataset, **dump_opts)
        mode = _salt("normalize_mode")(mode)
    except BrinyError as exc:
        return _fail(ret, str(exc))
    if isinstance(contents, str):
        data = (contents + "\n").encode(encoding or "utf-8", encoding_errors)
    else:
        data = bytes(contents)
    if _testing():
        _result, changes, _comment = _salt("check_managed_data")(name, data, user, group, mode, show_changes)
        if changes:
            ret.update(result=None, changes=changes, comment=f"Dataset will be serialized and stored into {name}")
            if not show_changes:
                ret["changes"]["diff"] = "<show_changes=False>"
        else:
            ret.update(result=True, comment=f"The file {name} is in the correct state")
    else:
        if check_cmd:
            _r, would, _c = _salt("check_managed_data")(name, data, user, group, mode, show_changes)
            if would:
                cret = _salt("check_cmd_data")(check_cmd, data, tmp_dir or None, tmp_ext)
                if cret.get("retcode"):
                    old = _salt("read")(name, binary=True) if os.path.isfile(name) else b""
                    diff = _salt("get_diff_text")(old, data) if show_changes else "<show_changes=False>"
                    ret.update(changes={"diff": diff}, comment="check_cmd execution failed", result=False)
                    ret["skip_watch"] = True
                    return ret
        out = _salt("manage_data")(name, data, user, group, mode, False, None, backup, makedirs, None, show_changes)
        ret.update(out)
    if isinstance(existing, dict) and isinstance(merged, dict):
        ret["changes"]["diff"] = _salt("dict_diff")(existing, merged)
    return ret
