"""Execution module ``defaults``: formula defaults and the merges map files use (Salt 3007's).

Runs wherever ``__salt__`` does (minion, ``briny-call``, master-side
rendering, where every function here is pure: they read only their
arguments and the ``salt://`` tree).

- ``merge(dest, src)`` merges ``src`` into ``dest`` *in place* by default
  and returns it, as Salt does: ``{% do salt['defaults.merge'](a, b) %}``
  changes ``a``. Lists are replaced unless ``merge_lists``.
- ``update(dest, defaults)`` gives every node of ``dest`` (a dict of dicts)
  the ``defaults`` under its own values; lists are merged by default.
- ``get('ns:key')`` reads ``salt://ns/defaults.yaml`` (else
  ``salt://ns/defaults.json``) in the ``base`` environment: the first
  part of the key names the formula folder, whatever SLS calls it (Salt's
  rule), and the rest is looked up as ``pillar.get`` does.
- ``deepcopy(obj)`` is a deep copy.
"""

from __future__ import annotations

import copy
import json
import logging
from typing import TYPE_CHECKING, Any

import yaml
from briny.common import fileclient
from briny.common.dictupdate import update_in_place
from briny.common.exceptions import CommandExecutionError, FileServerError
from briny.common.traverse import traverse

if TYPE_CHECKING:
    from briny.common.dunders import __job__, __opts__

log = logging.getLogger(__name__)


def _load(namespace: str) -> Any:
    """The data of ``salt://<namespace>/defaults.yaml`` or ``.json`` (the first found), or None."""
    client = fileclient.get_client(__opts__, __job__)
    for ext in ("yaml", "json"):
        path = f"{namespace}/defaults.{ext}"
        try:
            text = client.get_text(fileclient.clean_path(path), "base")  # a hostile namespace: not found
        except FileServerError as exc:
            log.debug("defaults: salt://%s cannot be read: %s", path, exc)
            continue
        if text is None:
            continue
        log.debug("Reading defaults from salt://%s", path)
        try:
            data = yaml.safe_load(text) if ext == "yaml" else json.loads(text)
        except (yaml.YAMLError, ValueError) as exc:
            raise CommandExecutionError(f"salt://{path} does not parse: {exc}") from exc
        return data or {}
    return None


def get(key: str, default: Any = "", **kwargs: Any) -> Any:
    """The value at ``key`` (``formula:path:to:value``) of the formula's defaults file; with no
    ``:``, the whole file's data (None when there is no such file)."""
    namespace, _, rest = str(key).partition(":")
    defaults = _load(namespace)
    if rest:
        return traverse(defaults, rest, default)
    return defaults


def merge(dest: Any, src: Any, merge_lists: bool = False, in_place: bool = True, convert_none: bool = True) -> Any:
    """``src`` merged recursively into ``dest`` (itself, or a deep copy with ``in_place=False``)."""
    if src is None and convert_none:
        src = {}
    if dest is None and convert_none:
        if in_place:
            raise TypeError("Can't perform in-place merge into NoneType")
        dest = {}
    merged = dest if in_place else copy.deepcopy(dest)
    return update_in_place(merged, src, merge_lists=merge_lists)


def deepcopy(source: Any) -> Any:
    """A deep copy of ``source``."""
    return copy.deepcopy(source)


def update(dest: Any, defaults: Any, merge_lists: bool = True, in_place: bool = True, convert_none: bool = True) -> Any:
    """Each node of ``dest`` (``{name: {...}}``) replaced by ``defaults`` merged with its own
    values (the node's win); ``dest`` itself is changed unless ``in_place=False``."""
    if in_place:
        if dest is None:
            raise TypeError("Can't perform in-place update into NoneType")
        nodes = dest
    else:
        nodes = copy.deepcopy({} if dest is None and convert_none else dest)
    if defaults is None and convert_none:
        defaults = {}
    for name, values in nodes.items():
        nodes[name] = merge(copy.deepcopy(defaults), values, merge_lists=merge_lists, convert_none=convert_none)
    return nodes
