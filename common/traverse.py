"""Nested lookup: the value at ``a:b:0`` in dicts and lists, as Salt 3007 finds it.

Runs wherever grains, pillar, config or a function's return are read by a
delimited key: ``grains.get``, ``pillar.get``, ``config.get``, the matchers
(``G@``, ``I@``), the ``traverse`` Jinja filter, ``filter_by`` and the
``get_return`` of ``onlyif``/``unless``. One function, Salt's
``traverse_dict_and_list``:

- ``key`` is split on ``delimiter`` (``:`` by default); a list of steps or a
  single integer is taken as it is;
- in a list, a numeric step is first looked up as a key of the dicts the
  list holds (``{1: 'x'}``), then as an index (negative ones too); any other
  step is looked up in the dicts the list holds, the first that has it wins
  (``{'a': [{'b': 1}]}`` with ``a:b`` gives 1);
- in a dict, a step that is not a key is read as YAML and tried again
  (``1`` finds the integer key 1, ``true`` the key True);
- anything else (a missing key, an index out of range, a step into a string
  or a number) gives ``default``.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_DELIM = ":"


def traverse(data: Any, key: Any, default: Any = None, delimiter: str = DEFAULT_DELIM) -> Any:
    """The value at ``key`` in ``data``, or ``default`` (see the module docstring)."""
    if isinstance(key, str):
        steps: Any = key.split(delimiter)
    elif isinstance(key, int) and not isinstance(key, bool):
        steps = [key]
    else:
        steps = key
    ptr = data
    for step in steps:
        if isinstance(ptr, list):
            found, ptr = _in_list(ptr, step)
            if not found:
                return default
            continue
        try:
            ptr = ptr[step]
        except KeyError:
            from .args import yamlify_arg  # YAML only when a key is missing

            try:
                loaded = yamlify_arg(step)
            except Exception as exc:  # noqa: BLE001 - a key YAML cannot read is simply not there
                log.debug("traverse: key %r does not read as YAML: %s", step, exc)
                return default
            if loaded == step:
                return default
            try:
                ptr = ptr[loaded]
            except (KeyError, TypeError):
                return default
        except (TypeError, IndexError):
            return default
    return ptr


def _in_list(items: list[Any], step: Any) -> tuple[bool, Any]:
    """(found, value) of one step into a list."""
    try:
        index = int(step)
    except (TypeError, ValueError):
        index = None
    wanted = step if index is None else index
    for item in items:
        if isinstance(item, dict):
            try:
                return True, item[wanted]
            except (KeyError, TypeError):
                continue
    if index is None:
        return False, None
    try:
        return True, items[index]
    except IndexError:
        return False, None
