"""Execution module ``mine``: publish this host's data for other minions, and read theirs (Salt 3007's).

Runs on a minion (its data go to the master's mine, ``master/mine.py``,
through a ``mine`` request), in ``briny-call --local`` (a local store,
``<cachedir>/mine_cache.msgpack``, as Salt keeps ``mine_cache`` in its
datastore) and, for ``mine.get`` only, on the master while it renders a
minion's pillar or states (``__job__.mine``: the master's own store,
answering exactly what that minion's ``mine.get`` would).

``mine_functions`` (minion config, pillar, or the master config in pillar:
``config.merge``) maps a name to its arguments in any of Salt's forms::

    mine_functions:
      network.ip_addrs: [eth0]              # positional arguments
      disk.usage: []
      internal_ip:                          # an alias: another function runs
        - mine_function: network.ip_addrs
        - cidr: 10.0.0.0/8
      secret:                               # only these minions may read it
        mine_function: grains.get
        key: secret_value
        allow_tgt: 'web*'
        allow_tgt_type: glob

``mine.update`` runs them all (or ``mine_functions=`` given) and stores the
results; a function that is missing or fails is logged and skipped, as in
Salt. The minion daemon runs ``mine.update`` when it first connects and then
every ``mine_interval`` minutes (default 60; ``mine_enabled: False`` stops
it). ``mine.get(tgt, fun, tgt_type='glob', exclude_minion=False)`` returns
``{minion: data}`` (``{fun: {minion: data}}`` for several functions);
masterless, only this minion's own data, when ``tgt`` names it.
"""

from __future__ import annotations

import copy
import logging
import os
import threading
from typing import TYPE_CHECKING, Any

import msgpack
from briny.common.atomicfile import write_atomic
from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    from briny.common.dunders import __job__, __opts__, __salt__

log = logging.getLogger(__name__)

ACL_ID = "__saltmine_acl__"
ACL_VERSION = 1
ACL_DATA = "__data__"
_LOCAL_LOCK = threading.Lock()
_MATCHERS = ("glob", "pcre", "list", "grain", "grain_pcre", "ipcidr", "compound", "pillar", "pillar_pcre")


# -- where the data go ---------------------------------------------------------------------------


def _local() -> bool:
    if __job__.mine is not None:
        return False  # on the master: its own store (and the minion's file_client is not read)
    return __opts__.get("file_client") == "local"


def _cache_path() -> str:
    return os.path.join(str(__opts__.get("cachedir") or "."), "mine_cache.msgpack")


def _read_local() -> dict[str, Any]:
    try:
        with open(_cache_path(), "rb") as fh:
            data = msgpack.unpackb(fh.read(), raw=False, strict_map_key=False)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
        log.warning("ignoring the local mine cache %s: %s", _cache_path(), exc)
        return {}
    return data if isinstance(data, dict) else {}


def _write_local(data: dict[str, Any]) -> bool:
    path = _cache_path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, msgpack.packb(data, use_bin_type=True, default=str), 0o600)
    except OSError as exc:
        raise CommandExecutionError(f"cannot write the local mine cache {path}: {exc.strerror}") from exc
    return True


def _ask(payload: dict[str, Any]) -> dict[str, Any]:
    """One ``mine`` request: to the master's store in a compile on the master, else to the master."""
    job = __job__
    channel = job.mine if job.mine is not None else job.master
    if channel is None:
        raise CommandExecutionError("the mine needs the master, and this minion has no connection to it")
    reply = channel({"cmd": "mine", **payload}, None)
    if reply is None:
        raise CommandExecutionError("the master did not answer the mine request")
    if "error" in reply:
        raise CommandExecutionError(f"the master refused the mine request: {reply['error']}")
    return reply


def _store(data: dict[str, Any], clear: bool = False) -> bool:
    if _local():
        with _LOCAL_LOCK:
            mine = {} if clear else _read_local()
            mine.update(data)
            return _write_local(mine)
    try:
        _ask({"op": "update", "data": data, "clear": bool(clear)})
    except CommandExecutionError as exc:
        log.error("the mine data were not stored: %s", exc)
        return False
    return True


# -- mine_functions ------------------------------------------------------------------------------


def _parse(definition: Any) -> tuple[str | None, list[Any], dict[str, Any], dict[str, Any]]:
    """(the function an alias runs or None, args, kwargs, the ACL) of one ``mine_functions`` entry."""
    name = None
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    if isinstance(definition, dict):
        kwargs = definition
        name = kwargs.pop("mine_function", None)
    elif isinstance(definition, list):
        for item in definition:
            if isinstance(item, dict):
                kwargs.update(item)
            else:
                args.append(item)
        name = kwargs.pop("mine_function", None)
    acl = {k: v for k in ("allow_tgt", "allow_tgt_type") if (v := kwargs.pop(k, None))}
    return name, args, kwargs, acl


def _wrap(data: Any, allow_tgt: Any = None, allow_tgt_type: Any = None) -> dict[str, Any]:
    wrapped: dict[str, Any] = {ACL_DATA: data, ACL_ID: ACL_VERSION}
    if allow_tgt:
        wrapped["allow_tgt"] = allow_tgt
        if allow_tgt_type:
            wrapped["allow_tgt_type"] = allow_tgt_type
    return wrapped


def _available(func: str) -> bool:
    if func not in __salt__:
        log.error("Function %s in mine_functions not available", func)
        return False
    return True


def _configured() -> Any:
    return copy.deepcopy(__salt__["config.merge"]("mine_functions", {}))


def update(clear: bool = False, mine_functions: Any = None, **kwargs: Any) -> bool | None:
    """Run the ``mine_functions`` (or those given) and store their results; None when there are none."""
    if not mine_functions:
        mine_functions = _configured()
        if not mine_functions:
            return None
    elif isinstance(mine_functions, list):
        mine_functions = {fun: {} for fun in mine_functions}
    elif isinstance(mine_functions, dict):
        mine_functions = copy.deepcopy(mine_functions)
    else:
        return None
    data: dict[str, Any] = {}
    for alias, definition in mine_functions.items():
        name, args, fkwargs, acl = _parse(definition)
        func = name or alias
        if not _available(func):
            continue
        try:
            result = __salt__[func](*args, **fkwargs)
        except Exception as exc:  # a failing function is skipped, as Salt does
            log.error("Function %s in mine.update failed to execute", func)
            log.debug("Error: %s", exc, exc_info=True)
            continue
        data[alias] = _wrap(result, **acl) if acl.get("allow_tgt") else result
    return _store(data, clear)


def send(name: str, *args: Any, **kwargs: Any) -> bool:
    """Run one function (``mine_function=`` another than ``name``) and store its result as ``name``."""
    kwargs = {k: v for k, v in kwargs.items() if not str(k).startswith("__")}
    func = kwargs.pop("mine_function", None) or name
    allow_tgt = kwargs.pop("allow_tgt", None)
    allow_tgt_type = kwargs.pop("allow_tgt_type", None)
    try:
        result = __salt__[func](*args, **kwargs)
    except Exception as exc:  # Salt logs the failure and returns False
        log.error("Function %s in mine.send failed to execute", func)
        log.debug("Error: %s", exc, exc_info=True)
        return False
    return _store({name: _wrap(result, allow_tgt, allow_tgt_type) if allow_tgt else result})


def get(tgt: Any, fun: Any, tgt_type: str = "glob", exclude_minion: bool = False, **kwargs: Any) -> dict[str, Any]:
    """The mine data of ``fun`` of the minions ``tgt`` names (see the module docstring)."""
    me = str(__opts__.get("id"))
    if _local():
        return _local_get(me, tgt, fun, tgt_type)
    ret = _ask({"op": "get", "tgt": tgt, "fun": fun, "tgt_type": tgt_type}).get("mine")
    ret = ret if isinstance(ret, dict) else {}
    if exclude_minion:
        ret.pop(me, None)
    return ret


def _local_get(me: str, tgt: Any, fun: Any, tgt_type: str) -> dict[str, Any]:
    if tgt_type not in _MATCHERS:
        raise KeyError(tgt_type)  # Salt's answer for a target type it has no local matcher for
    if not __salt__[f"match.{tgt_type}"](tgt):
        return {}
    data = _read_local()
    if isinstance(fun, str):
        functions, keyed = list(dict.fromkeys(fun.split(","))), len(set(fun.split(","))) > 1
    elif isinstance(fun, list):
        functions, keyed = fun, True
    else:
        return {}
    ret: dict[str, Any] = {}
    for function in functions:
        if function not in data:
            continue
        entry = data[function]
        # Salt tests membership whatever the value is: a True or a number stored there makes the
        # masterless mine.get fail ("argument of type 'bool' is not iterable"), here as there
        value = entry[ACL_DATA] if ACL_ID in entry else entry
        if keyed:
            ret.setdefault(function, {})[me] = value
        else:
            ret[me] = value
    return ret


def delete(fun: str, **kwargs: Any) -> bool:
    """Forget ``fun`` in this minion's mine."""
    if _local():
        with _LOCAL_LOCK:
            data = _read_local()
            data.pop(fun, None)
            return _write_local(data)
    try:
        _ask({"op": "delete", "fun": fun})
    except CommandExecutionError as exc:
        log.error("the mine data were not deleted: %s", exc)
        return False
    return True


def flush(**kwargs: Any) -> bool:
    """Forget this minion's whole mine."""
    if _local():
        with _LOCAL_LOCK:
            return _write_local({})
    try:
        _ask({"op": "flush"})
    except CommandExecutionError as exc:
        log.error("the mine data were not flushed: %s", exc)
        return False
    return True


def valid(**kwargs: Any) -> dict[str, Any] | None:
    """The ``mine_functions`` whose functions exist here, as ``mine.update`` would run them."""
    functions = _configured()
    if not functions:
        return None
    out: dict[str, Any] = {}
    for alias, definition in functions.items():
        name, args, fkwargs, _acl = _parse(definition)
        if not _available(name or alias):
            continue
        out[alias] = {name: args + [{k: v} for k, v in fkwargs.items()]} if name else definition
    return out
