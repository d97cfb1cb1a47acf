"""Execution module ``grains``: read and set this host's grains.

The reads run wherever ``__salt__`` does: on the minion, in ``briny-call``,
and on the master when it renders a minion's templates (with that minion's
cached grains). They are Salt 3007's, with Salt's semantics: ``key:sub:0``
paths through dicts and lists, ``default`` when missing, ``filter_by`` with
glob keys, ``default``, ``base`` and ``merge``.

The writes (``setval``, ``setvals``, ``set``, ``append``, ``remove``,
``delval``, ``delkey``) run on the managed host only (they are not pure: the
master never runs them for a template). As Salt's, they persist the grains
in the minion's grains file (``grains`` beside the config file:
``/etc/salt/grains`` for ``/etc/salt/minion``, YAML, keys sorted), change
this job's grains at once (later calls and states of the same job see them)
and ask the minion daemon to read its grains again (the next jobs and the
master's cache see them; after a restart the file is read at start). Their
answers are Salt's, messages included (``tests/golden/functions``). A
grains file that cannot be written fails the call (Salt logs and answers
success); ``setvals`` with no mapping fails with Salt's message.
"""

from __future__ import annotations

import copy
import logging
import math
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.common.matchers import filter_by as _filter_by
from briny.common.traverse import DEFAULT_DELIM
from briny.common.traverse import traverse as _traverse
from briny.common.truth import is_true as _is_true

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __job__, __opts__


log = logging.getLogger(__name__)

__func_alias__ = {"set_": "set"}

_MISSING = object()

_HOST_SANITIZED = {
    "id": "MINION.DOMAINNAME",
    "fqdn": "MINION.DOMAINNAME",
    "domain": "DOMAINNAME",
    "host": "MINION",
    "localhost": "MINION",
    "nodename": "MINION",
}


def _sanitize(key: str, value: Any) -> Any:
    if key in _HOST_SANITIZED:
        return _HOST_SANITIZED[key]
    if key == "serialnumber" and isinstance(value, str):
        keep = int(math.floor(len(value) * 0.75))
        return value[:keep] + "X" * (len(value) - keep)
    return value


def get(key: str, default: Any = "", delimiter: str = DEFAULT_DELIM, ordered: bool = True, **kwargs: Any) -> Any:
    """The grain at ``key`` (``a:b:c`` for nested values), or ``default``."""
    return _traverse(__grains__, key, default, delimiter)


def item(*args: str, **kwargs: Any) -> dict[str, Any]:
    """``{key: value}`` for each grain named; ``default``/``delimiter``/``sanitize`` kwargs."""
    default = kwargs.get("default", "")
    delimiter = kwargs.get("delimiter", DEFAULT_DELIM)
    ret = {arg: _traverse(__grains__, arg, default, delimiter) for arg in args}
    if _is_true(kwargs.get("sanitize")):
        ret = {k: _sanitize(k, v) for k, v in ret.items()}
    return ret


def items(sanitize: bool = False, **kwargs: Any) -> dict[str, Any]:
    """All grains (host names replaced by placeholders with ``sanitize=True``)."""
    grains = dict(__grains__)
    if _is_true(sanitize):
        grains = {k: _sanitize(k, v) for k, v in grains.items()}
    return grains


def ls(**kwargs: Any) -> list[str]:
    """The names of all grains, sorted."""
    return sorted(__grains__)


def has_value(key: str, **kwargs: Any) -> bool:
    """True when the grain ``key`` exists (even if empty or false), as Salt 3007 answers."""
    return _traverse(__grains__, key, _MISSING, kwargs.get("delimiter", DEFAULT_DELIM)) is not _MISSING


def equals(key: str, value: Any, **kwargs: Any) -> bool:
    """True when the grain ``key`` equals ``value``."""
    return bool(_traverse(__grains__, key, _MISSING) == value)


def filter_by(
    lookup_dict: Mapping[Any, Any],
    grain: str = "os_family",
    merge: Any = None,
    default: str = "default",
    base: str | None = None,
    **kwargs: Any,
) -> Any:
    """Pick the entry of ``lookup_dict`` whose key (a glob) matches the grain.

    A list grain matches when any member does. With no match, the ``default``
    key's entry (or None). ``base`` names an entry the result is merged over;
    ``merge`` (a dict) is merged on top of the result.
    """
    return _filter_by(
        lookup_dict,
        grain,
        __grains__,
        merge,
        default,
        base,
        kwargs.get("delimiter", DEFAULT_DELIM),
    )


# ---------------------------------------------------------------- writes (host only)


def _plain(value: Any) -> Any:
    """``value`` as plain dicts, lists and scalars, for the YAML file."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _persist(new: Mapping[str, Any], destructive: bool) -> None:
    """Write ``new`` into the grains file and this job's grains (a None value with
    ``destructive`` removes the key), then ask the daemon to read its grains again."""
    import yaml

    from briny.common.atomicfile import write_atomic
    from briny.minion.host.grains import grains_file

    path = grains_file(__opts__)
    if path is None:
        raise CommandExecutionError("No minion config file, so no grains file to write the grains to")
    stored: Any = {}
    mode = 0o644
    if os.path.isfile(path):
        try:
            with open(path, encoding="utf-8") as fh:
                stored = yaml.safe_load(fh)
            mode = os.stat(path).st_mode & 0o7777
        except yaml.YAMLError as exc:
            raise CommandExecutionError(f"Unable to read existing grains file: {exc}") from None
        except OSError as exc:
            raise CommandExecutionError(f"Unable to read the grains file {path}: {exc.strerror or exc}") from None
        if not isinstance(stored, dict):
            stored = {}
    for key, val in new.items():
        if val is None and destructive is True:
            stored.pop(key, None)
            __grains__.pop(key, None)
        else:
            stored[key] = copy.deepcopy(val)
            __grains__[key] = copy.deepcopy(val)
    try:
        write_atomic(path, yaml.safe_dump(_plain(stored), default_flow_style=False), mode=mode)
    except OSError as exc:
        raise CommandExecutionError(f"Unable to write to grains file at {path}: {exc.strerror or exc}") from None
    log.info("Grains %s written to %s", ", ".join(map(str, new)), path)
    hook = __job__.refresh_grains
    if callable(hook):
        hook()


def setvals(grains: Any, destructive: bool = False, refresh_pillar: bool = True, **kwargs: Any) -> dict[str, Any]:
    """Set each grain of the mapping ``grains`` (persisted in the grains file); a None value with
    ``destructive=True`` deletes the grain. Returns ``grains``."""
    if not isinstance(grains, Mapping):
        raise SaltInvocationError("setvals grains must be a dictionary.")
    _persist(grains, _is_true(destructive))
    return dict(grains)


def setval(key: str, val: Any, destructive: bool = False, refresh_pillar: bool = True, **kwargs: Any) -> dict[str, Any]:
    """Set the grain ``key`` to ``val`` (persisted in the grains file): ``{key: val}``."""
    return setvals({key: val}, destructive, refresh_pillar)


def _complex(value: Any) -> bool:
    return isinstance(value, (dict, list))


def _nest(key: str, value: Any, delimiter: str, missing: Any) -> tuple[str, Any]:
    """(top key, its new value) for ``value`` put at the nested ``key``: each parent found is a
    copy with ``value`` in place (a parent that is no dict is replaced by what is below it, as
    Salt does)."""
    while delimiter in key:
        key, rest = key.rsplit(delimiter, 1)
        parent = copy.deepcopy(_traverse(__grains__, key, missing, delimiter))
        if isinstance(parent, dict):
            parent[rest] = value
        value = parent
    return key, value


def append(key: str, val: Any, convert: bool = False, delimiter: str = DEFAULT_DELIM, **kwargs: Any) -> Any:
    """Append ``val`` (each item of a list) to the list grain ``key`` (made when missing;
    ``convert=True`` turns a single value into a list first)."""
    current = copy.deepcopy(_traverse(__grains__, key, [], delimiter))
    if _is_true(convert) and not isinstance(current, list):
        current = [] if current is None else [current]
    if not isinstance(current, list):
        return f"The key {key} is not a valid list"
    if val in current:
        return f"The val {val} was already in the list {key}"
    current.extend(val if isinstance(val, list) else [val])
    top, value = _nest(key, current, delimiter, {})
    return setval(top, value)


def remove(key: str, val: Any, delimiter: str = DEFAULT_DELIM, **kwargs: Any) -> Any:
    """Remove ``val`` from the list grain ``key``."""
    current = copy.deepcopy(_traverse(__grains__, key, [], delimiter))
    if not isinstance(current, list):
        return f"The key {key} is not a valid list"
    if val not in current:
        return f"The val {val} was not in the list {key}"
    current.remove(val)
    top, value = _nest(key, current, delimiter, None)
    return setval(top, value)


def _nest_set(key: str, value: Any, delimiter: str, force: bool, destructive: bool) -> tuple[str, Any] | str:
    """(top key, its new value) for ``grains.set`` of a nested key, or the refusal's text."""
    while delimiter in key:
        key, rest = key.rsplit(delimiter, 1)
        parent = copy.deepcopy(_traverse(__grains__, key, {}, delimiter))
        if isinstance(parent, dict):
            if value is None and destructive:
                parent.pop(rest, None)
            else:
                parent[rest] = value
        elif isinstance(parent, list):
            found = False
            for index, item_ in enumerate(parent):
                if item_ == rest:
                    parent[index] = {rest: value}
                    found = True
                elif isinstance(item_, dict) and rest in item_:
                    item_[rest] = value
                    found = True
            if not found:
                parent.append({rest: value})
        elif parent == rest or force:
            parent = {rest: value}
        else:
            return (
                f"The key '{key}' value is '{parent}', which is different from the provided key '{rest}'. "
                "Use 'force=True' to overwrite."
            )
        value = parent
    return key, value


def set_(
    key: str,
    val: Any = "",
    force: bool = False,
    destructive: bool = False,
    delimiter: str = DEFAULT_DELIM,
    **kwargs: Any,
) -> dict[str, Any]:
    """Set the grain ``key`` (``a:b:c`` for nested keys) to ``val``, Salt's conservative way: an
    existing list or dict, or a new list or dict over an existing value, needs ``force=True``.
    Returns ``{"comment", "changes", "result"}``."""
    force, destructive = _is_true(force), _is_true(destructive)
    ret: dict[str, Any] = {"comment": "", "changes": {}, "result": True}
    existing = _traverse(__grains__, key, _MISSING, delimiter)
    if existing is not _MISSING and existing == val and (val is not None or not destructive):
        ret["comment"] = "Grain is already set"
        return ret
    if existing is not None and not force:
        if existing is not _MISSING and _complex(existing):
            ret.update(comment=f"The key '{key}' exists but is a dict or a list. Use 'force=True' to overwrite.")
            ret["result"] = False
            return ret
        if _complex(val) and existing is not _MISSING:
            ret["comment"] = (
                f"The key '{key}' exists and the given value is a dict or a list. Use 'force=True' to overwrite."
            )
            ret["result"] = False
            return ret
    nested = _nest_set(key, val, delimiter, force, destructive)
    if isinstance(nested, str):
        ret.update(comment=nested, result=False)
        return ret
    top, value = nested
    ret["changes"] = setval(top, value, destructive=destructive)
    return ret


def delval(key: str, destructive: bool = False, force: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Set the grain ``key`` to None (``destructive=True``: delete it); a list or dict needs ``force``."""
    return set_(key, None, destructive=destructive, force=force)


def delkey(key: str, force: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Delete the grain ``key`` (``grains.delval`` with ``destructive=True``)."""
    return delval(key, destructive=True, force=force)
