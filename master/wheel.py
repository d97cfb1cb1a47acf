"""Wheel functions: master-side management calls (``salt.wheel`` steps of an orchestration).

Runs on the master host, in the process that calls it (``briny-run``). The
key functions act on the master's key store (:class:`briny.master.keys.KeyStore`,
which fires ``salt/key`` as ``briny-key`` does) and answer as Salt's wheel
``key`` module does: ``key.list_all``, ``key.list`` (``match`` a status),
``key.accept``, ``key.reject``, ``key.delete`` (``match`` a glob or comma list;
``include_rejected`` / ``include_denied`` / ``include_accepted`` as Salt),
``key.finger``. Any other name raises FunctionNotFound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from briny.common.exceptions import FunctionNotFound, SaltInvocationError
from briny.master.keys import KeyChange, KeyStore


def _matched(changes: list[KeyChange], folder: str) -> dict[str, list[str]]:
    return {folder: sorted(c.id for c in changes)} if changes else {}


def _match(kwargs: dict[str, Any]) -> str:
    match = kwargs.get("match")
    if isinstance(match, list):
        match = ",".join(str(m) for m in match)
    if not match:
        raise SaltInvocationError("the key functions need 'match': a minion id, a glob or a comma list")
    return str(match)


def _accept(keys: KeyStore, kw: dict[str, Any]) -> dict[str, Any]:
    changes = keys.accept(_match(kw), bool(kw.get("include_rejected")), bool(kw.get("include_denied")))
    return _matched(changes, "minions")


def _reject(keys: KeyStore, kw: dict[str, Any]) -> dict[str, Any]:
    changes = keys.reject(_match(kw), bool(kw.get("include_accepted")), bool(kw.get("include_denied")))
    return _matched(changes, "minions_rejected")


def _delete(keys: KeyStore, kw: dict[str, Any]) -> dict[str, Any]:
    changes = keys.delete(_match(kw))
    found: dict[str, list[str]] = {}
    for change in changes:
        found.setdefault(str(change.src), []).append(change.id)
    return {folder: sorted(ids) for folder, ids in found.items()}


_KEY: dict[str, Callable[[KeyStore, dict[str, Any]], Any]] = {
    "list_all": lambda keys, kw: keys.list_keys(),
    "list": lambda keys, kw: keys.list_status(str(kw.get("match") or "all")),
    "accept": _accept,
    "reject": _reject,
    "delete": _delete,
    "finger": lambda keys, kw: keys.fingerprints(_match(kw)),
}


def call(opts: dict[str, Any], name: str, **kwargs: Any) -> Any:
    """The answer of the wheel function ``name`` (``key.accept``, ...)."""
    module, _, fun = str(name).partition(".")
    if module != "key" or fun not in _KEY:
        raise FunctionNotFound(f"'{name}' is not available.")
    return _KEY[fun](KeyStore(opts), kwargs)
