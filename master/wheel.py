"""Wheel functions: master-side management calls (``salt.wheel`` steps of an orchestration,
``wheel.*`` reactions).

Runs on the master host, in the process that calls it (``briny-run``, the
reactor's workers). The key functions act on the master's key store
(:class:`briny.master.keys.store.KeyStore`, which fires ``salt/key`` as ``briny-key``
does) and answer as Salt's wheel ``key`` module does, with Salt's argument
names: ``key.list_all``, ``key.list`` (``match`` a status), ``key.accept``,
``key.reject``, ``key.delete`` (``match`` a glob, a comma list or a list;
``include_rejected`` / ``include_denied`` / ``include_accepted`` as Salt),
``key.finger``. Any other name raises FunctionNotFound. :func:`function` gives
the function itself (its signature is Salt's, less the leading key store),
:func:`run` calls it on a key store, :func:`call` on the store of ``opts``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from briny.common.args import call_function
from briny.common.exceptions import FunctionNotFound, SaltInvocationError
from briny.master.keys.store import KeyChange, KeyStore


def _matched(changes: list[KeyChange], folder: str) -> dict[str, list[str]]:
    return {folder: sorted(c.id for c in changes)} if changes else {}


def _match(match: Any) -> str:
    if isinstance(match, list):
        match = ",".join(str(m) for m in match)
    if not match:
        raise SaltInvocationError("the key functions need 'match': a minion id, a glob or a comma list")
    return str(match)


def list_all(keys: KeyStore) -> dict[str, list[str]]:
    """Every key, by status folder (``minions``, ``minions_pre``, ...)."""
    return keys.list_keys()


def list_status(keys: KeyStore, match: Any = "all") -> dict[str, list[str]]:
    """``key.list``: the keys of one status (``acc``, ``pre``, ``rej``, ``den``, ``all``)."""
    return keys.list_status(str(match or "all"))


def accept(
    keys: KeyStore, match: Any = None, include_rejected: bool = False, include_denied: bool = False
) -> dict[str, Any]:
    """Accept the pending keys ``match`` names (rejected/denied ones too when asked)."""
    changes = keys.accept(_match(match), bool(include_rejected), bool(include_denied))
    return _matched(changes, "minions")


def reject(
    keys: KeyStore, match: Any = None, include_accepted: bool = False, include_denied: bool = False
) -> dict[str, Any]:
    """Reject the pending keys ``match`` names (accepted/denied ones too when asked)."""
    changes = keys.reject(_match(match), bool(include_accepted), bool(include_denied))
    return _matched(changes, "minions_rejected")


def delete(keys: KeyStore, match: Any = None) -> dict[str, Any]:
    """Delete the keys ``match`` names, whatever their status: the ids by the folder they left."""
    found: dict[str, list[str]] = {}
    for change in keys.delete(_match(match)):
        found.setdefault(str(change.src), []).append(change.id)
    return {folder: sorted(ids) for folder, ids in found.items()}


def finger(keys: KeyStore, match: Any = None) -> dict[str, Any]:
    """The fingerprints of the keys ``match`` names, by status folder."""
    return keys.fingerprints(_match(match))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "key.list_all": list_all,
    "key.list": list_status,
    "key.accept": accept,
    "key.reject": reject,
    "key.delete": delete,
    "key.finger": finger,
}


def function(name: str) -> Callable[..., Any]:
    """The wheel function ``name`` (first parameter: the key store); FunctionNotFound if none."""
    func = FUNCTIONS.get(str(name))
    if func is None:
        raise FunctionNotFound(f"'{name}' is not available.")
    return func


def run(keys: KeyStore, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """The answer of the wheel function ``name`` on ``keys``; SaltInvocationError for arguments
    it does not take."""
    return call_function(function(name), name, [keys, *args], kwargs)


def call(opts: dict[str, Any], name: str, **kwargs: Any) -> Any:
    """The answer of the wheel function ``name`` (``key.accept``, ...) on the key store of ``opts``."""
    return call_function(function(name), name, [KeyStore(opts)], kwargs)
